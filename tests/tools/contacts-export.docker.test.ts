// VER-2 on real Docker Chromium: the same scenario module as the fake-computer test (real Pi,
// scripted faux model) through the API test system with the Docker provider. The page tools drive
// the bot's visible Chromium through the supervisor's page methods; the contacts app runs INSIDE
// the computer (containers have no network), started through exec.

import {
  contactsAppScript,
  expectContactsExportRecorded,
  runContactsExportScenario,
} from "@rakazo/computer-tools/testing";
import { createProvider, type Sandbox } from "@rakazo/sandbox";
import { resolveWorkspacePath } from "@rakazo/services";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COMPUTER_IMAGE } from "../support/docker.ts";
import { createTestSystem, runningComputer, type TestSystem } from "../support/system.ts";
import { requireDocker } from "../support/tools.ts";

const APP_PORT = 8765;
const APP_URL = `http://127.0.0.1:${APP_PORT}/`;
const APP_DIR = ".contacts-app";
const EXPORT_LOG = `${APP_DIR}/exports.log`;

// Skips only locally without an engine or image; fails under CI=true (tests/support/tools.ts).
const gate = await requireDocker("VER-2 contacts export on Docker Chromium");

describe.skipIf(gate.skip)(gate.title, () => {
  let system: TestSystem;
  let tenant: Awaited<ReturnType<TestSystem["newTenant"]>>;
  let computerId: string;
  let sandbox: Sandbox;
  const text = async (path: string) => new TextDecoder().decode(await sandbox.files.read(path));

  beforeAll(async () => {
    system = await createTestSystem({
      provider: (dataDir) => createProvider({ kind: "docker", image: COMPUTER_IMAGE, dataDir }),
    });
    await system.startWorker();
    tenant = await system.newTenant("vera-docker");
    computerId = await runningComputer(system, tenant);
    const row = await system.ctx.db.query.computers.findFirst({ where: (c, { eq }) => eq(c.id, computerId) });
    sandbox = system.provider.sandbox(row?.providerRef as string);

    // The app, served on the computer's own loopback by a detached node process.
    await sandbox.files.write(
      `${APP_DIR}/server.mjs`,
      new TextEncoder().encode(contactsAppScript({ port: APP_PORT, exportLog: EXPORT_LOG })),
    );
    await sandbox.files.write(EXPORT_LOG, new Uint8Array());
    const started = await sandbox.exec({
      argv: ["sh", "-c", `setsid -f node ${APP_DIR}/server.mjs >${APP_DIR}/server.log 2>&1 </dev/null`],
      timeoutMs: 10_000,
    });
    expect(started.exitCode, started.stderr).toBe(0);
    const probe = `fetch(${JSON.stringify(APP_URL)}).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))`;
    const deadline = Date.now() + 15_000;
    for (;;) {
      const up = await sandbox.exec({ argv: ["node", "-e", probe], timeoutMs: 5_000 });
      if (up.exitCode === 0) break;
      if (Date.now() > deadline)
        throw new Error(`contacts app did not start: ${await text(`${APP_DIR}/server.log`)}`);
      await new Promise((done) => setTimeout(done, 200));
    }
  }, 180_000);

  afterAll(async () => {
    if (!system) return;
    if (computerId) {
      // Deleting destroys the container; wait for it so no container is left behind.
      await system.rpc("computer/delete", { computerId }, tenant.token);
      const deadline = Date.now() + 60_000;
      while (Date.now() < deadline) {
        const row = await system.ctx.db.query.computers.findFirst({
          where: (c, { eq }) => eq(c.id, computerId),
        });
        if (row?.state === "deleted") break;
        await new Promise((done) => setTimeout(done, 250));
      }
      if (sandbox) await system.provider.destroy(sandbox.ref);
    }
    await system.close();
  }, 120_000);

  it("the Docker provider offers the supervisor's page browser (BRW-1)", () => {
    expect(system.provider.capabilities.pageBrowser).toBe(true);
    expect(sandbox.pageBrowser).toBeDefined();
  });

  it("replays the contacts export: navigate, snapshot, export, check the CSV, write a summary", async () => {
    const started = await system.rpc("run/start", { computerId, botId: tenant.botId }, tenant.token);
    expect(started.status, JSON.stringify(started.json)).toBe(200);
    const { run, lease } = started.json.result;
    const caller = { userId: tenant.userId, tokenId: tenant.tokenId };

    const result = await runContactsExportScenario({
      session: {
        ctx: system.ctx,
        caller,
        computerId,
        botId: tenant.botId,
        runId: run.id,
        fencingToken: lease.fencingToken,
      },
      appUrl: APP_URL,
    });

    // One click, one export: nothing replayed.
    expect((await text(EXPORT_LOG)).split("\n").filter(Boolean)).toEqual(["export"]);
    // The click's download landed in the workspace, where Chromium saved it; the rest as on
    // every computer.
    await expectContactsExportRecorded({
      ctx: system.ctx,
      caller,
      computerId,
      runId: run.id,
      botId: tenant.botId,
      result,
      read: (path) => text(resolveWorkspacePath({ mode: "team" }, tenant.botId, path)),
    });

    // The page tools drove the bot's own visible desktop (started lazily by browser_navigate).
    const slots = await sandbox.desktop?.list();
    expect(slots?.map((s) => s.botId)).toEqual([tenant.botId]);
  });
});
