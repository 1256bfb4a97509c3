// PER-2, PER-7, PRV-3 through the real jobs: run completion checkpoints (deferred while another
// bot works), stop checkpoints, and a machine that vanished is replaced and restored.
import { computerOperations, computers } from "@rakazo/db";
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestSystem, eventually, runningComputer, type TestSystem } from "../support/system.ts";

let system: TestSystem;
let tenant: Awaited<ReturnType<TestSystem["newTenant"]>>;

beforeAll(async () => {
  system = await createTestSystem();
  await system.startWorker();
  tenant = await system.newTenant("jo");
});
afterAll(() => system.close());

const row = async (id: string) =>
  (
    await system.ctx.db.select().from(computers).where(eq(computers.id, id))
  )[0] as typeof computers.$inferSelect;

async function checkpointOps(id: string) {
  return eventually(async () => {
    const ops = await system.ctx.db
      .select()
      .from(computerOperations)
      .where(and(eq(computerOperations.computerId, id), eq(computerOperations.kind, "checkpoint")));
    return ops.length > 0 && ops.every((o) => o.status === "succeeded" || o.status === "failed")
      ? ops
      : undefined;
  });
}

const exec = (computerId: string, argv: string[], lease?: { botId: string; fencingToken: number }) =>
  system.rpc("computer/exec", { computerId, argv, ...(lease ? { lease } : {}) }, tenant.token);

describe("checkpoints at boundaries", () => {
  it("a completed run saves the workspace as the next revision", async () => {
    const id = await runningComputer(system, tenant);
    const { run, lease } = (
      await system.rpc("run/start", { computerId: id, botId: tenant.botId }, tenant.token)
    ).json.result;
    await exec(id, ["mkdir", "-p", "report"], { botId: tenant.botId, fencingToken: lease.fencingToken });
    expect((await row(id)).homeRevision).toBe(0);
    await system.rpc("run/complete", { runId: run.id, fencingToken: lease.fencingToken }, tenant.token);
    const [op] = await checkpointOps(id);
    expect(op).toMatchObject({ status: "succeeded", stage: "saved" });
    expect((await row(id)).homeRevision).toBe(1);
  });

  it("defers while another bot still works there; the last finishing run saves", async () => {
    const id = await runningComputer(system, tenant);
    const other = (await system.rpc("bot/create", { spaceId: tenant.spaceId, name: "other" }, tenant.token))
      .json.result.id;
    const first = (await system.rpc("run/start", { computerId: id, botId: tenant.botId }, tenant.token)).json
      .result;
    const second = (await system.rpc("run/start", { computerId: id, botId: other }, tenant.token)).json
      .result;
    await system.rpc(
      "run/complete",
      { runId: first.run.id, fencingToken: first.lease.fencingToken },
      tenant.token,
    );
    expect((await checkpointOps(id)).map((o) => o.stage)).toEqual(["deferred"]);
    expect((await row(id)).homeRevision).toBe(0);
    await system.rpc(
      "run/fail",
      { runId: second.run.id, fencingToken: second.lease.fencingToken },
      tenant.token,
    );
    await eventually(async () => ((await row(id)).homeRevision === 1 ? true : undefined));
  });

  it("stop saves first; a vanished machine is replaced and its workspace restored (PRV-3)", async () => {
    const id = await runningComputer(system, tenant);
    await exec(id, ["mkdir", "-p", "projects/alpha"]);
    await system.rpc("computer/stop", { computerId: id }, tenant.token);
    await eventually(async () => ((await row(id)).state === "stopped" ? true : undefined));
    expect((await row(id)).homeRevision).toBe(1);

    // Browsing works on the stopped computer from the stored workspace (FIL-1).
    const listing = await system.rpc(
      "computer/files/list",
      { computerId: id, path: "projects" },
      tenant.token,
    );
    expect(listing.json.result, JSON.stringify(listing.json)).toMatchObject({
      source: "stored",
      entries: [{ name: "alpha", type: "directory" }],
    });

    // The machine disappears behind our back; starting the computer replaces it.
    const oldRef = (await row(id)).providerRef as string;
    await system.provider.destroy(oldRef);
    await system.rpc("computer/start", { computerId: id }, tenant.token);
    await eventually(async () => ((await row(id)).state === "running" ? true : undefined));
    expect((await row(id)).providerRef).not.toBe(oldRef);
    expect((await exec(id, ["ls", "projects"])).json.result.stdout).toBe("alpha\n");
  });
});
