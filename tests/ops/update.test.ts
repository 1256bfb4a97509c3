// OPS-1 / OPS-3 / OPS-5: computer/update and computer/recover as durable jobs under the
// computer-wide reservation. Reservation refusals while an update holds; a happy update keeps
// the workspace; kill -9 of the real worker process in the update's provisioning stage leaves
// it interrupted (no stage replayed), the workspace revision intact, and release + recover give
// back a working computer with the files written before the update.
import { computerOperations, computers } from "@rakazo/db";
import { runUpdateJob, sweepIdleComputers } from "@rakazo/services";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Child, killHard, startTestWorker } from "../support/processes.ts";
import { createTestSystem, eventually, runningComputer, type TestSystem } from "../support/system.ts";

let system: TestSystem;
let owner: Awaited<ReturnType<TestSystem["newTenant"]>>;
let child: Child | undefined;

beforeAll(async () => {
  system = await createTestSystem();
  owner = await system.newTenant("owner"); // the first user: the server owner
});
afterAll(async () => {
  if (child) await killHard(child);
  await system?.close();
});

const computerRow = async (id: string) =>
  (await system.ctx.db.select().from(computers).where(eq(computers.id, id)))[0];
const operation = async (id: string) =>
  (await system.ctx.db.select().from(computerOperations).where(eq(computerOperations.id, id)))[0];

// The fake provider's exec is a toy; its workspace files are real (written through the sandbox).
async function sandboxOf(computerId: string) {
  const ref = (await computerRow(computerId))?.providerRef;
  if (!ref) throw new Error("no machine");
  return system.provider.sandbox(ref);
}

async function writeNote(computerId: string, text: string) {
  await (await sandboxOf(computerId)).files.write("notes/before-update.txt", text);
}

async function readNote(computerId: string): Promise<string> {
  return new TextDecoder().decode(await (await sandboxOf(computerId)).files.read("notes/before-update.txt"));
}

describe("computer/update (OPS-1, OPS-3)", () => {
  it("holds a reservation that refuses leases, stop, takeover and idle suspension with OPERATION_IN_PROGRESS", async () => {
    const worker = await system.startWorker();
    const computerId = await runningComputer(system, owner);
    await writeNote(computerId, "kept across the update");
    const before = await computerRow(computerId);
    expect((await system.rpc("computer/get", { computerId }, owner.token)).json.result.canUpdate).toBe(true);
    // No worker while we look: the queued update already reserves the computer.
    await worker.stop({ timeoutMs: 5_000 });
    const update = await system.rpc("computer/update", { computerId }, owner.token);
    expect(update.status, JSON.stringify(update.json)).toBe(200);
    expect(update.json.result).toMatchObject({ kind: "update", status: "queued" });

    const refusals = {
      lease: await system.rpc("run/start", { computerId, botId: owner.botId }, owner.token),
      stop: await system.rpc("computer/stop", { computerId }, owner.token),
      takeover: await system.rpc("computer/takeControl", { computerId, botId: owner.botId }, owner.token),
      secondUpdate: await system.rpc("computer/update", { computerId }, owner.token),
    };
    for (const [what, res] of Object.entries(refusals)) {
      expect([what, res.status, res.json.error?.code]).toEqual([what, 409, "OPERATION_IN_PROGRESS"]);
    }
    // Idle suspension: even with a zero idle timeout the reserved computer is not claimed.
    expect(await sweepIdleComputers(system.ctx, { idleTimeoutMs: 0, takeoverAwakeMs: 0 })).not.toContain(
      computerId,
    );
    expect((await computerRow(computerId))?.state).toBe("running");

    const resumed = await system.startWorker();
    const done = await eventually(async () => {
      const op = await operation(update.json.result.id);
      return op?.status === "succeeded" || op?.status === "failed" ? op : undefined;
    }, 30_000);
    expect(done).toMatchObject({ status: "succeeded", stage: "running", error: null });
    const after = await computerRow(computerId);
    // Rebuilt (a new machine), live work saved first (a new revision), and restored.
    expect(after?.providerRef).not.toBe(before?.providerRef);
    expect(after?.homeRevision).toBeGreaterThan(before?.homeRevision ?? 0);
    expect(await readNote(computerId)).toBe("kept across the update");
    // The reservation is gone with the operation.
    const lease = await system.rpc("run/start", { computerId, botId: owner.botId }, owner.token);
    expect(lease.status, JSON.stringify(lease.json)).toBe(200);
    await resumed.stop({ timeoutMs: 5_000 });
  }, 120_000);
});

// Each stage of an update, entered by a real worker process whose provider never finishes it.
const STAGES = [
  { stage: "checkpointing", env: { TEST_HANG: "export" }, checkpoints: false },
  { stage: "stopping", env: { TEST_HANG: "destroy" }, checkpoints: true },
  { stage: "provisioning", env: { TEST_PROVISION: "hang" }, checkpoints: true },
] as const;

describe("kill -9 of the worker during an update (OPS-5)", () => {
  it.each(STAGES)(
    "in $stage: interrupted, never replayed, release + recover restore the files",
    async ({ stage, env, checkpoints }) => {
      const provisioner = await system.startWorker();
      const computerId = await runningComputer(system, owner, { name: "to update" });
      await writeNote(computerId, "written before the update");
      await provisioner.stop({ timeoutMs: 5_000 });
      const revisionBefore = (await computerRow(computerId))?.homeRevision ?? 0;
      // The only worker now: a real process whose provider never finishes provisioning.
      child = await startTestWorker({
        DATABASE_URL: system.database.url,
        TEST_DATA_DIR: system.dataDir,
        ...env,
      });
      const update = await system.rpc("computer/update", { computerId }, owner.token);
      expect(update.status, JSON.stringify(update.json)).toBe(200);
      const operationId = update.json.result.id as string;
      await eventually(async () => {
        const op = await operation(operationId);
        return op?.status === "running" && op.stage === stage ? true : undefined;
      }, 30_000);
      // Give the stage a moment to reach its hanging provider call.
      await new Promise((done) => setTimeout(done, 500));
      const checkpointed = (await computerRow(computerId))?.homeRevision ?? 0;
      if (checkpoints) expect(checkpointed).toBeGreaterThan(revisionBefore);
      else expect(checkpointed).toBe(revisionBefore);
      await killHard(child);

      const reconciling = await system.startWorker({
        reconciler: { intervalMs: 300, queuedGraceMs: 1_000, runGraceMs: 500, workerSilenceMs: 1_500 },
      });
      const interrupted = await eventually(async () => {
        const op = await operation(operationId);
        return op?.status === "interrupted" ? op : undefined;
      }, 20_000);
      expect(interrupted.stage).toBe(stage);
      // A redelivered job does nothing: no second checkpoint, no stage replayed.
      await runUpdateJob(
        system.ctx,
        { computerId, operationId },
        {
          jobId: interrupted.jobId ?? "",
          retryCount: 1,
          isLastAttempt: true,
          signal: new AbortController().signal,
        },
      );
      expect((await operation(operationId))?.status).toBe("interrupted");
      expect((await computerRow(computerId))?.homeRevision).toBe(checkpointed);
      // Still reserved while interrupted: recovery is not offered yet.
      const early = await system.rpc("computer/recover", { computerId }, owner.token);
      expect(early.json.error?.code).toBe("OPERATION_IN_PROGRESS");

      const released = await system.rpc(
        "computer/releaseInterrupted",
        { id: operationId, workersStopped: true },
        owner.token,
      );
      expect(released.status, JSON.stringify(released.json)).toBe(200);
      const recover = await system.rpc("computer/recover", { computerId }, owner.token);
      expect(recover.status, JSON.stringify(recover.json)).toBe(200);
      expect(recover.json.result).toMatchObject({ kind: "recover" });
      await eventually(
        async () => ((await computerRow(computerId))?.state === "running" ? true : undefined),
        30_000,
      );
      expect((await operation(recover.json.result.id))?.status).toBe("succeeded");
      expect((await computerRow(computerId))?.homeRevision).toBe(checkpointed);
      expect(await readNote(computerId)).toBe("written before the update");
      await reconciling.stop({ timeoutMs: 5_000 });
    },
    150_000,
  );
});
