// The last worker to stop owns the deployment's computers (fake provider, in-process workers):
// a worker that stops while another is live leaves them running; the last one checkpoints and
// stops them and releases their machines; past the claim deadline a computer is left running,
// consistently (state and machine), and reported.
import { computers } from "@rakazo/db";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestSystem, runningComputer, type TestSystem } from "../support/system.ts";

let system: TestSystem;

beforeAll(async () => {
  system = await createTestSystem();
});
afterAll(async () => {
  await system?.close();
});

async function row(computerId: string) {
  const [found] = await system.ctx.db.select().from(computers).where(eq(computers.id, computerId));
  if (!found) throw new Error(`no computer ${computerId}`);
  return found;
}

const records = (msg: string) =>
  system.logLines.map((line) => JSON.parse(line) as Record<string, any>).filter((r) => r.msg === msg);

describe("stopping the last worker stops the deployment's computers", () => {
  it("a worker leaving while another is live keeps them; the last one stops and releases them", async () => {
    const tenant = await system.newTenant("pool");
    const first = await system.startWorker({ heartbeatMs: 500 });
    const second = await system.startWorker({ heartbeatMs: 500 });
    const computerId = await runningComputer(system, tenant);
    const before = await row(computerId);

    await first.stop({ computers: "stop" });
    expect(records("worker.computers_left_to_other_workers")).toHaveLength(1);
    expect((await row(computerId)).state).toBe("running");
    expect(await system.provider.status(before.providerRef as string)).toBe("running");

    await second.stop({ computers: "stop" });
    expect(records("worker.computers_stopped").at(-1)).toMatchObject({ stopped: 1 });
    const after = await row(computerId);
    expect(after).toMatchObject({ state: "stopped", providerRef: null });
    expect(after.homeRevision).toBeGreaterThan(before.homeRevision);
    expect(await system.provider.status(before.providerRef as string)).toBe("missing");
  });

  it("past the claim deadline a computer stays running with its machine, and is reported", async () => {
    const tenant = await system.newTenant("late");
    const worker = await system.startWorker({
      heartbeatMs: 500,
      shutdown: { concurrency: 1, claimWithinMs: 0, jobsWithinMs: 1_000 },
    });
    const computerId = await runningComputer(system, tenant);
    await worker.stop({ computers: "stop" });
    const report = records("worker.computers_not_all_stopped").at(-1);
    expect(report).toMatchObject({ stopped: 0 });
    expect(report?.leftRunning).toContain(computerId);
    const left = await row(computerId);
    expect(left.state).toBe("running");
    expect(await system.provider.status(left.providerRef as string)).toBe("running");
  });
});
