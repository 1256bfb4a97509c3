// The operator CLI on the operations verbs (OPS-2, OPS-6): `ops list`,
// `ops release <id> --workers-stopped`, `ops recover <id>` against a real database, refusing
// like the RPC with the same codes, then a worker's reconciler brings the computer back.
import { computerOperations, computers } from "@rakazo/db";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { operatorCli } from "../support/operator-cli.ts";
import { createTestSystem, eventually, runningComputer, type TestSystem } from "../support/system.ts";

let system: TestSystem;

beforeAll(async () => {
  system = await createTestSystem();
});
afterAll(() => system?.close());

const cli = (args: string[]) => operatorCli(system, args);

async function operationOf(computerId: string) {
  const [row] = await system.ctx.db
    .select()
    .from(computerOperations)
    .where(eq(computerOperations.computerId, computerId));
  if (!row) throw new Error(`no operation for ${computerId}`);
  return row;
}

describe("./rakazo ops", () => {
  it("lists, refuses with the RPC's codes, releases, and recovers", async () => {
    const owner = await system.newTenant("owner");
    const other = await system.newTenant("other");
    // An interrupted provisioning (the kill -9 path itself is tests/ops/interrupted.test.ts).
    const created = await system.client(owner.token).call("computer/create", { spaceId: owner.spaceId });
    const stuck = await operationOf(created.id);
    await system.ctx.db
      .update(computerOperations)
      .set({ status: "interrupted", stage: "provisioning", error: "worker went silent" })
      .where(eq(computerOperations.id, stuck.id));

    const listed = await cli(["ops", "list"]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(new RegExp(`${stuck.id}\\s+${created.id}\\s+provision\\s+interrupted`));
    const json = await cli(["ops", "list", "--json"]);
    expect(JSON.parse(json.stdout)).toEqual([
      expect.objectContaining({ id: stuck.id, status: "interrupted" }),
    ]);

    const usage = await cli(["ops", "release"]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("usage: ./rakazo ops");
    const unasserted = await cli(["ops", "release", stuck.id]);
    expect([unasserted.code, unasserted.stderr]).toEqual([
      1,
      expect.stringContaining("WORKERS_STOPPED_REQUIRED"),
    ]);

    await system.startWorker({
      reconciler: { intervalMs: 300, queuedGraceMs: 500, runGraceMs: 500, workerSilenceMs: 60_000 },
    });
    const otherComputer = await runningComputer(system, other);
    const foreign = await cli(["ops", "release", (await operationOf(otherComputer)).id, "--workers-stopped"]);
    expect([foreign.code, foreign.stderr]).toEqual([1, expect.stringContaining("OPERATION_IN_OTHER_SPACE")]);
    const ownRunning = await runningComputer(system, owner);
    const finished = await cli(["ops", "release", (await operationOf(ownRunning)).id, "--workers-stopped"]);
    expect([finished.code, finished.stderr]).toEqual([
      1,
      expect.stringContaining("OPERATION_NOT_INTERRUPTED"),
    ]);
    const early = await cli(["ops", "recover", created.id]);
    expect([early.code, early.stderr]).toEqual([1, expect.stringContaining("CONFLICT")]);

    const released = await cli(["ops", "release", stuck.id, "--workers-stopped"]);
    expect(released.code, released.stderr).toBe(0);
    expect(released.stdout).toContain(`released ${stuck.id}; computer ${created.id} is failed`);
    expect((await operationOf(created.id)).status).toBe("released");

    const recovered = await cli(["ops", "recover", stuck.id]);
    expect(recovered.code, recovered.stderr).toBe(0);
    expect(recovered.stdout).toContain(`recovering ${created.id}`);
    await eventually(async () => {
      const [row] = await system.ctx.db.select().from(computers).where(eq(computers.id, created.id));
      return row?.state === "running" ? true : undefined;
    }, 20_000);
  }, 120_000);
});
