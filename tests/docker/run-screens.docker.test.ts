// CMP-6 on a real computer: completing a run keeps the bot's screen (same slot; the run-end save
// restarts only its Chromium, which restores its session, so signed-in cookies stay); failing a
// run tears the screen down while the profile stays on disk.
// Taking control marks the screen as controlled in the supervisor (CMP-5: never evicted).
import { createProvider, type SupervisedDesktop } from "@rakazo/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COMPUTER_IMAGE } from "../support/docker.ts";
import { createTestSystem, eventually, runningComputer, type TestSystem } from "../support/system.ts";
import { requireDocker } from "../support/tools.ts";

// Skips only locally without an engine or image; fails under CI=true (tests/support/tools.ts).
const gate = await requireDocker("run endings on a Docker computer");

describe.skipIf(gate.skip)(gate.title, () => {
  let system: TestSystem;
  let tenant: Awaited<ReturnType<TestSystem["newTenant"]>>;
  let computerId: string;
  let desktop: SupervisedDesktop;

  beforeAll(async () => {
    system = await createTestSystem({
      provider: (dataDir) => createProvider({ kind: "docker", image: COMPUTER_IMAGE, dataDir }),
    });
    await system.startWorker();
    tenant = await system.newTenant("screens");
    computerId = await runningComputer(system, tenant);
    const row = await system.ctx.db.query.computers.findFirst({ where: (c, { eq }) => eq(c.id, computerId) });
    desktop = system.provider.sandbox(row?.providerRef as string).desktop as SupervisedDesktop;
  }, 120_000);

  afterAll(async () => {
    if (!system) return;
    await system.rpc("computer/delete", { computerId }, tenant.token);
    await eventually(async () => {
      const row = await system.ctx.db.query.computers.findFirst({
        where: (c, { eq }) => eq(c.id, computerId),
      });
      return row?.state === "deleted" ? true : undefined;
    }, 60_000).catch(() => undefined);
    await system.close();
  }, 120_000);

  const chromiumPids = async (botId: string) => {
    const res = await system.rpc(
      "computer/exec",
      // The oldest matching process is the browser itself (renderers come and go). "[-]-" keeps
      // the pattern from matching the command line of the exec wrapper that carries it.
      { computerId, argv: ["pgrep", "-o", "-f", `[-]-user-data-dir=[^ ]*bot-${botId.replace(/_/g, "_5f")}`] },
      tenant.token,
    );
    return res.json.result.stdout.trim();
  };

  async function runWithScreen(botId: string) {
    const { run, lease } = (await system.rpc("run/start", { computerId, botId }, tenant.token)).json.result;
    const frame = await system.rpc(
      "computer/observe",
      { computerId, botId, fencingToken: lease.fencingToken },
      tenant.token,
    );
    expect(frame.status, JSON.stringify(frame.json)).toBe(200);
    return { run, lease, slot: frame.json.result.slot };
  }

  it("completion keeps the slot for the next run; only the run-end save restarts the browser", async () => {
    const first = await runWithScreen(tenant.botId);
    const pidsBefore = await chromiumPids(tenant.botId);
    expect(pidsBefore).not.toBe("");
    const relaunchesBefore = system.logLines.filter((l) =>
      l.includes('"msg":"computer.browsers_relaunched"'),
    );
    await system.rpc(
      "run/complete",
      { runId: first.run.id, fencingToken: first.lease.fencingToken },
      tenant.token,
    );
    // The run-end checkpoint (PER-7) closes the browser so its profile is on disk, saves, and
    // reopens it (session restored); display, x11vnc and viewers stay (docs/persistence.md).
    await eventually(
      async () =>
        system.logLines.filter((l) => l.includes('"msg":"computer.browsers_relaunched"')).length >
        relaunchesBefore.length
          ? true
          : undefined,
      60_000,
    );
    const second = await runWithScreen(tenant.botId);
    expect(second.slot).toEqual(first.slot);
    // A browser again (the relaunched one, or a revived one), with the same profile.
    expect(await chromiumPids(tenant.botId)).not.toBe("");
  });

  it("failure tears the screen down; the profile stays", async () => {
    const botId = (await system.rpc("bot/create", { spaceId: tenant.spaceId, name: "failing" }, tenant.token))
      .json.result.id;
    const { run, lease } = await runWithScreen(botId);
    expect(await chromiumPids(botId)).not.toBe("");
    const failed = await system.rpc(
      "run/fail",
      { runId: run.id, fencingToken: lease.fencingToken, error: "boom" },
      tenant.token,
    );
    expect(failed.json.result?.status, JSON.stringify(failed.json)).toBe("failed");
    expect((await desktop.list()).map((d) => d.botId)).not.toContain(botId);
    expect(await chromiumPids(botId)).toBe("");
    const profiles = await system.rpc(
      "computer/exec",
      { computerId, argv: ["ls", ".browser-profiles"] },
      tenant.token,
    );
    expect(profiles.json.result.stdout).toContain(`bot-${botId.replace(/_/g, "_5f")}`);
  });

  it("taking control marks the screen controlled in the supervisor; releasing unmarks it", async () => {
    const botId = (await system.rpc("bot/create", { spaceId: tenant.spaceId, name: "human" }, tenant.token))
      .json.result.id;
    await system.rpc("computer/observe", { computerId, botId }, tenant.token);
    const controlled = async () => (await desktop.list()).find((d) => d.botId === botId)?.controlled;
    expect(await controlled()).toBe(false);
    expect((await system.rpc("computer/takeControl", { computerId, botId }, tenant.token)).status).toBe(200);
    expect(await controlled()).toBe(true);
    await system.rpc("computer/releaseControl", { computerId, botId }, tenant.token);
    expect(await controlled()).toBe(false);
  });
});
