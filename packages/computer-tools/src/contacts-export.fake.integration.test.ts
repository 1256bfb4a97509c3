// VER-2 on the stateful fake computer: real Pi, scripted model, in-process page emulator (BRW-7).
// The Docker Chromium variant runs the same scenario module with a different session.
import { afterAll, beforeAll, expect, it } from "vitest";
import { createTestSystem, runningComputer, type TestSystem } from "../../../tests/support/system.ts";
import { type ContactsApp, contactsCsv, startContactsApp } from "./scenarios/contacts-app.ts";
import { runContactsExportScenario, SUMMARY_PATH, summaryFor } from "./scenarios/contacts-export.ts";
import { listActivity } from "./services-internal.ts";

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

  expect(result.error).toBeUndefined();
  expect(result.toolCalls.map((c) => [c.name, c.isError])).toEqual([
    ["browser_navigate", false],
    ["browser_snapshot", false],
    ["browser_act", false],
    ["shell", false],
    ["write_file", false],
  ]);
  expect(app.exports()).toBe(1); // one click, one export: nothing replayed

  const row = await system.ctx.db.query.computers.findFirst({ where: (c, { eq }) => eq(c.id, computerId) });
  const files = system.provider.sandbox(row?.providerRef as string).files;
  expect(new TextDecoder().decode(await files.read(result.downloadPath))).toBe(contactsCsv());
  const summary = new TextDecoder().decode(await files.read(SUMMARY_PATH));
  expect(summary).toBe(summaryFor(contactsCsv()));
  expect(summary).toContain("3 contacts: Ada Lovelace, Grace Hopper, Alan Turing");

  // Activity: mutations only, in order; the snapshot (read-only) is not recorded.
  const { events } = await listActivity(system.ctx, caller, { computerId });
  expect(events.map((e) => [e.type, e.payload.tool, e.payload.ok])).toEqual([
    ["computer.command", "browser_navigate", true],
    ["computer.command", "browser_act", true],
    ["computer.command", "shell", true],
    ["computer.command", "write_file", true],
  ]);
  expect(events.every((e) => e.runId === run.id && e.botId === tenant.botId)).toBe(true);
  expect(events[1]?.payload.line).toContain("downloaded downloads/contacts.csv");
  expect(events[2]?.payload.command).toBe("cat downloads/contacts.csv");
  expect(events[2]?.payload.outputTail).toContain("Grace Hopper");
  expect(events[3]?.payload.line).toBe(`write_file ${SUMMARY_PATH} (${Buffer.byteLength(summary)} bytes)`);
});
