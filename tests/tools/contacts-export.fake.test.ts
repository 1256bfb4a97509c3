// VER-2 on the stateful fake computer: real Pi, scripted model, page tools on the in-process page
// emulator (`BROWSER_PROVIDER=fake`) and on a headless Chromium the test runtime starts
// (`BROWSER_PROVIDER=emulator`, BRW-7). The Docker Chromium variant runs the same scenario module.
import { existsSync } from "node:fs";
import {
  type ContactsApp,
  expectContactsExportRecorded,
  runContactsExportScenario,
  startContactsApp,
} from "@rakazo/computer-tools/testing";
import { type BrowserProviderMode, resolveWorkspacePath } from "@rakazo/services";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HEADLESS_CHROMIUM } from "../support/headless-browser.ts";
import { createTestSystem, runningComputer, type TestSystem } from "../support/system.ts";

// Under CI a missing Chromium fails the emulator case instead of skipping it.
const noChromium = !existsSync(HEADLESS_CHROMIUM) && process.env.CI !== "true";

let system: TestSystem;
let app: ContactsApp;

beforeAll(async () => {
  system = await createTestSystem({ headlessBrowsers: true });
  await system.startWorker();
  app = await startContactsApp();
});
afterAll(async () => {
  // The system first: its headless Chromium holds keep-alive connections to the app.
  await system?.close();
  await app?.close();
});

describe.each<{ browser: BrowserProviderMode; skip: boolean }>([
  { browser: "fake", skip: false },
  { browser: "emulator", skip: noChromium },
])("BROWSER_PROVIDER=$browser", ({ browser, skip }) => {
  it.skipIf(skip)(
    "replays the contacts export: navigate, snapshot, export, check the CSV, write a summary",
    { timeout: 60_000 },
    async () => {
      const tenant = await system.newTenant(`vera-${browser}`);
      const computerId = await runningComputer(system, tenant);
      const started = await system.rpc("run/start", { computerId, botId: tenant.botId }, tenant.token);
      const { run, lease } = started.json.result;
      const caller = { userId: tenant.userId, tokenId: (tenant as unknown as { tokenId: string }).tokenId };
      const exportsBefore = app.exports();
      const chromiumsBefore = system.headless?.started() ?? 0;

      const result = await runContactsExportScenario({
        session: {
          ctx: system.ctx,
          caller,
          computerId,
          botId: tenant.botId,
          runId: run.id,
          fencingToken: lease.fencingToken,
          browser,
        },
        appUrl: app.url,
      });

      expect(app.exports() - exportsBefore).toBe(1); // one click, one export: nothing replayed
      // The emulator mode really drove a headless Chromium; the fake mode started none.
      expect((system.headless?.started() ?? 0) - chromiumsBefore).toBe(browser === "emulator" ? 1 : 0);
      const row = await system.ctx.db.query.computers.findFirst({
        where: (c, { eq }) => eq(c.id, computerId),
      });
      const files = system.provider.sandbox(row?.providerRef as string).files;
      await expectContactsExportRecorded({
        ctx: system.ctx,
        caller,
        computerId,
        runId: run.id,
        botId: tenant.botId,
        result,
        read: async (path) =>
          new TextDecoder().decode(
            await files.read(resolveWorkspacePath({ mode: "team" }, tenant.botId, path)),
          ),
      });
    },
  );
});
