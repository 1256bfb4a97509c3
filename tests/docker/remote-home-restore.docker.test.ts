// The run-end checkpoint on a remote provider, through the whole control plane (PER-7, PER-2,
// PRV-3): an E2B computer through the REAL `e2b` SDK against the loopback emulator, whose
// sandboxes are `--network none` containers of the computer image. A run's last action sets a
// cookie from a page served inside the computer; the run completes and its checkpoint (browsers
// closed, the workspace exported through the SDK, saved in the local homes store) is taken;
// the sandbox is killed behind the control plane's back; the next use answers COMPUTER_GONE and
// queues a replacement, which imports that checkpoint — and a revisit sends the cookie. The
// Docker side of the same journey is in home-restore.docker.test.ts. The adapter installs this
// checkout's supervisor bundle, so the checkpoint's browser close is this checkout's.
import { randomBytes } from "node:crypto";
import { type E2BEmulator, startE2BEmulator } from "@rakazo/emulators/e2b";
import { createE2BProvider } from "@rakazo/sandbox/e2b-family";
import { bundleSupervisor } from "@rakazo/supervisor/bundle";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CookiePage, cookiePage } from "../support/cookie-page.ts";
import { COMPUTER_IMAGE } from "../support/docker.ts";
import { recordFigures } from "../support/figures.ts";
import { createTestSystem, eventually, type TestSystem } from "../support/system.ts";
import { requireDocker } from "../support/tools.ts";

// Skips only locally without an engine or image; fails under CI=true (tests/support/tools.ts).
const gate = await requireDocker("a remote (E2B) home restored from its run-end checkpoint");

const API_KEY = `emu_${randomBytes(12).toString("hex")}`;
const LABELS = { "rakazo-test.suite": "remote-home-restore" };
const PORT = 18_767;
// Set by /late as the run's last action: only in the browser's memory when the run ends.
const LATE_COOKIE = `late=${randomBytes(5).toString("hex")}`;

describe.skipIf(gate.skip)(gate.title, () => {
  let emulator: E2BEmulator;
  let system: TestSystem;
  let tenant: Awaited<ReturnType<TestSystem["newTenant"]>>;
  let computerId: string;
  let page: CookiePage;

  const computerRow = () =>
    system.ctx.db.query.computers.findFirst({ where: (c, { eq }) => eq(c.id, computerId) });
  const running = () =>
    eventually(async () => {
      const current = await computerRow();
      if (current?.state === "failed") throw new Error(`the computer failed: ${current.lastError}`);
      return current?.state === "running" ? current : undefined;
    }, 180_000);

  beforeAll(async () => {
    emulator = await startE2BEmulator({
      flavor: "e2b",
      image: COMPUTER_IMAGE,
      apiKey: API_KEY,
      labels: LABELS,
    });
    const bundle = bundleSupervisor().then((b) => new Uint8Array(Buffer.from(b.text)));
    system = await createTestSystem({
      provider: async () =>
        createE2BProvider({
          apiKey: API_KEY,
          apiUrl: emulator.url,
          sandboxUrl: emulator.url,
          domain: emulator.domain,
          portUrlTemplate: emulator.portUrlTemplate,
          supervisorBundle: () => bundle,
        }),
      // homes: the default LocalAgentHomeStore on the data dir, as for a remote provider without
      // object storage: the checkpoint is the only copy once the sandbox is gone.
    });
    await system.startWorker();
    tenant = await system.newTenant("remote-home-user");
    const created = await system.rpc("computer/create", { spaceId: tenant.spaceId }, tenant.token);
    expect(created.status, JSON.stringify(created.json)).toBe(200);
    computerId = created.json.result.id;
    await running();
    page = cookiePage(system, {
      computerId,
      botId: tenant.botId,
      token: tenant.token,
      port: PORT,
      cookies: { "/late": LATE_COOKIE },
    });
  }, 240_000);

  afterAll(async () => {
    if (system) {
      const row = computerId ? await computerRow() : undefined;
      if (computerId) await system.rpc("computer/delete", { computerId }, tenant.token);
      await eventually(
        async () => ((await computerRow())?.state === "deleted" ? true : undefined),
        60_000,
      ).catch(() => {});
      if (row?.providerRef) await system.provider.destroy(row.providerRef).catch(() => {});
      await system.close();
    }
    await emulator?.close();
  }, 180_000);

  it("a cookie set the moment before a run ends survives a replacement restored from its checkpoint (PER-7)", async () => {
    // The run's last act sets a cookie and the run ends right after, well inside Chromium's 30 s
    // cookie write batching: only a browser closed before the export has it on disk.
    await page.start();
    const start = await system.rpc("run/start", { computerId, botId: tenant.botId }, tenant.token);
    expect(start.status, JSON.stringify(start.json)).toBe(200);
    const { run, lease } = start.json.result;
    const previous = (await computerRow())?.homeRevision ?? 0;
    expect(await page.visit("/late", lease.fencingToken)).toBe("-");
    const completed = await system.rpc(
      "run/complete",
      { runId: run.id, fencingToken: lease.fencingToken },
      tenant.token,
    );
    expect(completed.status, JSON.stringify(completed.json)).toBe(200);
    const saved = await eventually(async () => {
      const current = await computerRow();
      return current && current.homeRevision > previous ? current : undefined;
    }, 120_000);
    // The checkpoint is done (browsers back) before the machine goes.
    await eventually(async () =>
      system.logLines.some((line) => line.includes('"computer.browsers_relaunched"')) ? true : undefined,
    );
    const checkpoint = system.logLines
      .map((line) => JSON.parse(line) as { msg?: string; reason?: string; ms: number; bytes: number })
      .find((line) => line.msg === "computer.home_checkpoint" && line.reason?.startsWith("run_"));
    if (!checkpoint) throw new Error("no run-end checkpoint was logged");

    // The sandbox goes behind the control plane's back; only the local checkpoint is left.
    const ref = saved.providerRef as string;
    const killed = performance.now();
    await emulator.killSandbox(ref);
    expect(await system.provider.status(ref)).toBe("missing");
    const use = await system.rpc("computer/exec", { computerId, argv: ["true"] }, tenant.token);
    expect(use.status, JSON.stringify(use.json)).toBe(409);
    expect(use.json.error.code).toBe("COMPUTER_GONE");
    const replaced = await running();
    const recoveredMs = performance.now() - killed;
    expect(replaced.providerRef).not.toBe(ref);
    expect(emulator.sandboxes()).not.toContain(ref);
    expect(replaced.homeRevision).toBe(saved.homeRevision);

    // The replacement's Chromium opens the restored profile and sends the late cookie.
    await page.start();
    expect((await page.visit("/check")).split("; ")).toContain(LATE_COOKIE);

    recordFigures("remote-run-end-checkpoint", [
      {
        name: "E2B run-end checkpoint (browser closed, exported, saved)",
        value: checkpoint.ms,
        unit: "ms",
      },
      { name: "E2B run-end checkpoint size", value: checkpoint.bytes, unit: "bytes" },
      {
        name: "E2B sandbox killed → replacement running (restored from the checkpoint)",
        value: Math.round(recoveredMs),
        unit: "ms",
      },
    ]);
  }, 600_000);
});
