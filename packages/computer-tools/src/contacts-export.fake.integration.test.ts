// VER-2 on the stateful fake computer: real Pi, scripted model, in-process page emulator (BRW-7).
// The Docker Chromium variant runs the same scenario module with a different session.
import { afterAll, beforeAll, expect, it } from "vitest";
import { createTestSystem, runningComputer, type TestSystem } from "../../../tests/support/system.ts";
import { type ContactsApp, startContactsApp } from "./scenarios/contacts-app.ts";
import { expectContactsExportRecorded } from "./scenarios/contacts-export.expect.ts";
import { runContactsExportScenario } from "./scenarios/contacts-export.ts";
import { resolveForBot } from "./services-internal.ts";

let system: TestSystem;
let app: ContactsApp;

beforeAll(async () => {
  system = await createTestSystem();
  await system.startWorker();
  app = await startContactsApp();
});
afterAll(async () => {
  await app?.close();
  await system?.close();
});

it("replays the contacts export: navigate, snapshot, export, check the CSV, write a summary", async () => {
  const tenant = await system.newTenant("vera");
  const computerId = await runningComputer(system, tenant);
  const started = await system.rpc("run/start", { computerId, botId: tenant.botId }, tenant.token);
  const { run, lease } = started.json.result;
  const caller = { userId: tenant.userId, tokenId: (tenant as unknown as { tokenId: string }).tokenId };

  const result = await runContactsExportScenario({
    session: {
      ctx: system.ctx,
      caller,
      computerId,
      botId: tenant.botId,
      runId: run.id,
      fencingToken: lease.fencingToken,
    },
    appUrl: app.url,
  });

  expect(app.exports()).toBe(1); // one click, one export: nothing replayed
  const row = await system.ctx.db.query.computers.findFirst({ where: (c, { eq }) => eq(c.id, computerId) });
  const files = system.provider.sandbox(row?.providerRef as string).files;
  await expectContactsExportRecorded({
    ctx: system.ctx,
    caller,
    computerId,
    runId: run.id,
    botId: tenant.botId,
    result,
    read: async (path) =>
      new TextDecoder().decode(await files.read(resolveForBot({ mode: "team" }, tenant.botId, path))),
  });
});
