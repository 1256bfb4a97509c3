import { computerOperations, newId, type OperationKind, type OperationStatus } from "@rakazo/db";
import type { JobName } from "@rakazo/jobs";
import { eq } from "drizzle-orm";
import type { ServiceContext } from "../context.ts";

type Tx = Parameters<Parameters<ServiceContext["db"]["transaction"]>[0]>[0];

/** Records a queued operation in the caller's transaction; enqueue it after commit. */
export async function recordOperation(
  tx: Tx | ServiceContext["db"],
  computerId: string,
  kind: OperationKind,
  stage: string,
): Promise<string> {
  const id = newId("operation");
  await tx.insert(computerOperations).values({ id, computerId, kind, stage, status: "queued" });
  return id;
}

/**
 * Enqueues the job of a recorded operation. Runs after the row is committed so the worker
 * always finds it; a crash in between leaves a queued row for the reconciler (OPS-4).
 */
export async function enqueueOperation(
  ctx: Pick<ServiceContext, "db" | "jobs">,
  job: JobName,
  computerId: string,
  operationId: string,
  extra: { reason?: string } = {},
): Promise<void> {
  const jobId = await ctx.jobs.send(job, { computerId, operationId, ...extra });
  await ctx.db.update(computerOperations).set({ jobId }).where(eq(computerOperations.id, operationId));
}

export async function updateOperation(
  ctx: Pick<ServiceContext, "db">,
  operationId: string,
  patch: { status?: OperationStatus; stage?: string; error?: string | null },
): Promise<void> {
  const finished = patch.status === "succeeded" || patch.status === "failed";
  await ctx.db
    .update(computerOperations)
    .set({ ...patch, heartbeatAt: new Date(), ...(finished ? { finishedAt: new Date() } : {}) })
    .where(eq(computerOperations.id, operationId));
}
