// The stop job's order through the real jobs on the fake provider (PER-2, PER-7): every
// desktop's browser is closed — not its whole desktop released — before the save, and the
// machine is told it may stop without a grace period only when every browser closed; a stop of
// an unchanged home writes no new revision but still stops the machine.
import { computerOperations, computers } from "@rakazo/db";
import { createFakeProvider, type SandboxProvider, type StopOptions } from "@rakazo/sandbox";
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createTestSystem, eventually, runningComputer, type TestSystem } from "../support/system.ts";

let system: TestSystem;
let tenant: Awaited<ReturnType<TestSystem["newTenant"]>>;
/** What the stop job asked of each machine's desktops and of the provider, in order. */
let calls: string[] = [];
let stops: (StopOptions | undefined)[] = [];
/** A bot whose browser neither closes nor whose desktop releases. */
let stuckBot: string | undefined;

/** The fake provider, with the desktop and stop calls recorded (and one bot's made to fail). */
function recording(provider: SandboxProvider): SandboxProvider {
  return {
    ...provider,
    async stop(ref, options) {
      stops.push(options);
      calls.push("stop");
      return provider.stop(ref, options);
    },
    sandbox(ref) {
      const sandbox = provider.sandbox(ref);
      const desktop = sandbox.desktop;
      if (!desktop) return sandbox;
      const failing = (botId: string) => {
        if (botId === stuckBot) throw new Error(`the browser of ${botId} does not close`);
      };
      return {
        ...sandbox,
        desktop: {
          ...desktop,
          async closeBrowser(botId) {
            calls.push(`closeBrowser ${botId}`);
            failing(botId);
            return desktop.closeBrowser(botId);
          },
          async release(botId) {
            calls.push(`release ${botId}`);
            failing(botId);
            return desktop.release(botId);
          },
        },
      };
    },
  };
}

beforeAll(async () => {
  system = await createTestSystem({
    provider: async (rootDir) => recording(createFakeProvider({ rootDir })),
  });
  await system.startWorker();
  tenant = await system.newTenant("sam");
});
afterAll(() => system.close());
beforeEach(() => {
  calls = [];
  stops = [];
  stuckBot = undefined;
});

const row = async (id: string) =>
  (
    await system.ctx.db.select().from(computers).where(eq(computers.id, id))
  )[0] as typeof computers.$inferSelect;

async function stopped(id: string) {
  const stop = await system.rpc("computer/stop", { computerId: id }, tenant.token);
  expect(stop.status, JSON.stringify(stop.json)).toBe(200);
  const computer = await eventually(async () => {
    const current = await row(id);
    if (current.state === "running" && current.lastError) throw new Error(current.lastError);
    return current.state === "stopped" ? current : undefined;
  });
  const [operation] = await system.ctx.db
    .select()
    .from(computerOperations)
    .where(and(eq(computerOperations.computerId, id), eq(computerOperations.kind, "stop")))
    .orderBy(computerOperations.createdAt)
    .limit(1);
  return { computer, operation };
}

async function withTwoDesktops(): Promise<{ id: string; other: string }> {
  const id = await runningComputer(system, tenant);
  const other = (
    await system.rpc("bot/create", { spaceId: tenant.spaceId, name: `other-${id.slice(-4)}` }, tenant.token)
  ).json.result.id as string;
  for (const botId of [tenant.botId, other]) {
    const seen = await system.rpc("computer/observe", { computerId: id, botId }, tenant.token);
    expect(seen.status, JSON.stringify(seen.json)).toBe(200);
  }
  return { id, other };
}

describe("stop", () => {
  it("closes every browser before the save and stops without a grace once all closed", async () => {
    const { id, other } = await withTwoDesktops();
    await system.rpc("computer/exec", { computerId: id, argv: ["mkdir", "-p", "notes"] }, tenant.token);
    const { computer } = await stopped(id);
    expect(computer.homeRevision).toBe(1);
    // Both browsers closed (in either order), no desktop released, then the machine stopped.
    expect(calls.slice(0, 2).sort()).toEqual(
      [`closeBrowser ${tenant.botId}`, `closeBrowser ${other}`].sort(),
    );
    expect(calls.slice(2)).toEqual(["stop"]);
    expect(stops).toEqual([{ quiesced: true }]);
  });

  it("a browser that cannot be closed: its desktop is released instead; if that fails too, a graceful stop", async () => {
    const { id, other } = await withTwoDesktops();
    stuckBot = other;
    await stopped(id);
    expect(calls).toContain(`release ${other}`);
    expect(calls).not.toContain(`release ${tenant.botId}`);
    // Not every browser is known closed: the machine keeps its shutdown grace.
    expect(stops).toEqual([{ quiesced: false }]);
  });

  it("of an unchanged home writes no new revision but still stops", async () => {
    const id = await runningComputer(system, tenant);
    await system.rpc("computer/exec", { computerId: id, argv: ["mkdir", "-p", "kept"] }, tenant.token);
    const first = await stopped(id);
    expect(first.computer.homeRevision).toBe(1);
    const start = await system.rpc("computer/start", { computerId: id }, tenant.token);
    expect(start.status, JSON.stringify(start.json)).toBe(200);
    await eventually(async () => ((await row(id)).state === "running" ? true : undefined));

    stops = [];
    await system.rpc("computer/stop", { computerId: id }, tenant.token);
    const again = await eventually(async () => {
      const current = await row(id);
      return current.state === "stopped" ? current : undefined;
    });
    expect(again.homeRevision).toBe(1);
    expect(stops).toHaveLength(1);
    expect(await system.provider.status(again.providerRef as string)).toBe("stopped");
    const checkpointLines = system.logLines.filter(
      (line) => line.includes('"computer.home_checkpoint"') && line.includes(id),
    );
    expect(checkpointLines.map((line) => JSON.parse(line).status)).toEqual(["saved", "unchanged"]);
  });
});
