// OPS-5 / OPS-6 / OPS-2 with a real worker process: the worker is killed (kill -9) while it
// provisions; after the (shortened) silence window the operation is `interrupted` and the
// computer stays reserved; a redelivered job does not replay it; computer/operations shows it;
// computer/releaseInterrupted refuses each wrong caller/body with its own code, then releases,
// after which starting the computer recovers it.
import { computerOperations, computers } from "@rakazo/db";
import { INTERRUPTED_ERROR, RELEASED_COMPUTER_ERROR, runProvisionJob } from "@rakazo/services";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Child, killHard, startTestWorker } from "../support/processes.ts";
import { createTestSystem, eventually, runningComputer, type TestSystem } from "../support/system.ts";

let system: TestSystem;
let worker: Child | undefined;

beforeAll(async () => {
  system = await createTestSystem();
});
afterAll(async () => {
  if (worker) await killHard(worker);
  await system?.close();
});

async function operationOf(computerId: string) {
  const [row] = await system.ctx.db
    .select()
    .from(computerOperations)
    .where(eq(computerOperations.computerId, computerId));
  return row;
}

describe("an operation whose worker was killed (OPS-5, OPS-6)", () => {
  it("becomes interrupted, stays reserved, and only the server owner's explicit release frees it", async () => {
    // The first user of the installation is the server owner.
    const owner = await system.newTenant("owner");
    const other = await system.newTenant("other");
    worker = await startTestWorker({
      DATABASE_URL: system.database.url,
      TEST_DATA_DIR: system.dataDir,
      TEST_PROVISION: "hang",
    });
    const created = await system.rpc("computer/create", { spaceId: owner.spaceId }, owner.token);
    expect(created.status, JSON.stringify(created.json)).toBe(200);
    const computerId = created.json.result.id as string;
    const claimed = await eventually(async () => {
      const op = await operationOf(computerId);
      return op?.status === "running" && op.workerId ? op : undefined;
    }, 20_000);
    await killHard(worker);

    await system.startWorker({
      reconciler: { intervalMs: 300, queuedGraceMs: 1_000, runGraceMs: 500, workerSilenceMs: 1_500 },
    });
    const interrupted = await eventually(async () => {
      const op = await operationOf(computerId);
      return op?.status === "interrupted" ? op : undefined;
    }, 20_000);
    expect(interrupted).toMatchObject({ id: claimed.id, stage: "provisioning", error: INTERRUPTED_ERROR });
    // Still reserved: the computer keeps the state the operation left; nothing else may act.
    const [computer] = await system.ctx.db.select().from(computers).where(eq(computers.id, computerId));
    expect(computer?.state).toBe("provisioning");
    const start = await system.rpc("computer/start", { computerId }, owner.token);
    expect(start.json.error?.code).toBe("CONFLICT");

    // A redelivery of the job (pg-boss retries an expired job) does not replay the stage.
    await runProvisionJob(
      system.ctx,
      { computerId, operationId: claimed.id },
      {
        jobId: claimed.jobId ?? "",
        retryCount: 1,
        isLastAttempt: false,
        signal: new AbortController().signal,
      },
    );
    expect((await operationOf(computerId))?.status).toBe("interrupted");
    expect(system.logLines.some((l) => l.includes('"msg":"operation.delivery_skipped"'))).toBe(true);

    // OPS-2: an app reopened later finds the interrupted operation.
    const listed = await system.rpc("computer/operations", { computerId }, owner.token);
    expect(listed.json.result).toEqual([
      expect.objectContaining({ id: claimed.id, kind: "provision", status: "interrupted" }),
    ]);

    const release = (token: string, body: Record<string, unknown>) =>
      system.rpc("computer/releaseInterrupted", body, token);
    const missingAssertion = await release(owner.token, { id: claimed.id });
    expect([missingAssertion.status, missingAssertion.json.error?.code]).toEqual([
      400,
      "WORKERS_STOPPED_REQUIRED",
    ]);
    const falseAssertion = await release(owner.token, { id: claimed.id, workersStopped: false });
    expect(falseAssertion.json.error?.code).toBe("WORKERS_STOPPED_REQUIRED");
    const notOwner = await release(other.token, { id: claimed.id, workersStopped: true });
    expect([notOwner.status, notOwner.json.error?.code]).toEqual([403, "NOT_SERVER_OWNER"]);
    // The other space's operation (its computer's provisioning) is not the owner's to release.
    const otherComputer = await runningComputer(system, other);
    const otherOp = await operationOf(otherComputer);
    const otherSpace = await release(owner.token, { id: otherOp?.id, workersStopped: true });
    expect([otherSpace.status, otherSpace.json.error?.code]).toEqual([403, "OPERATION_IN_OTHER_SPACE"]);
    // An operation of the owner's space that is not interrupted.
    const ownSecond = await runningComputer(system, owner);
    const succeeded = await operationOf(ownSecond);
    const notInterrupted = await release(owner.token, { id: succeeded?.id, workersStopped: true });
    expect([notInterrupted.status, notInterrupted.json.error?.code]).toEqual([
      409,
      "OPERATION_NOT_INTERRUPTED",
    ]);
    expect((await operationOf(computerId))?.status).toBe("interrupted");

    const released = await release(owner.token, { id: claimed.id, workersStopped: true });
    expect(released.status, JSON.stringify(released.json)).toBe(200);
    expect(released.json.result.operation.status).toBe("released");
    expect(released.json.result.computer).toMatchObject({
      state: "failed",
      lastError: RELEASED_COMPUTER_ERROR,
    });
    // Recovery is offered: starting brings it up from its last saved workspace.
    const recovered = await system.rpc("computer/start", { computerId }, owner.token);
    expect(recovered.status, JSON.stringify(recovered.json)).toBe(200);
    await eventually(async () => {
      const [row] = await system.ctx.db.select().from(computers).where(eq(computers.id, computerId));
      return row?.state === "running" ? true : undefined;
    }, 20_000);
  }, 120_000);
});
