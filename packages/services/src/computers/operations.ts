import { createHash } from "node:crypto";
import { computerOperations, newId, type OperationKind, type OperationStatus } from "@rakazo/db";
import type { JobName } from "@rakazo/jobs";
import { and, eq, inArray, ne } from "drizzle-orm";
import type { ServiceContext } from "../context.ts";

type Tx = Parameters<Parameters<ServiceContext["db"]["transaction"]>[0]>[0];

/**
 * The pg-boss job id of an operation, derived from its id (a name-based UUID). Enqueueing and
 * republishing send with this id, so a second send of the same operation is a no-op in pg-boss
 * instead of a second job (OPS-4: a claimed job is never replayed by the reconciler).
 */
export function jobIdOf(operationId: string): string {
  return derivedJobId(`rakazo-operation:${operationId}`);
}

/** A name-based (version 5 shaped) UUID for `name`: the same name always gives the same job id. */
export function derivedJobId(name: string): string {
  const hex = createHash("sha1").update(name).digest("hex");
  const variant = ((Number.parseInt(hex.slice(16, 17), 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** Records a queued operation in the caller's transaction; enqueue it after commit. */
export async function recordOperation(
  tx: Tx | ServiceContext["db"],
  computerId: string,
  kind: OperationKind,
  stage: string,
): Promise<string> {
  const id = newId("operation");
  await tx
    .insert(computerOperations)
    .values({ id, computerId, kind, stage, status: "queued", jobId: jobIdOf(id) });
  return id;
}

/**
 * Enqueues the job of a recorded operation. Runs after the row is committed so the worker
 * always finds it; a crash in between leaves a queued row for the reconciler (OPS-4), which
 * sends the same job id again (./reconcile.ts).
 */
export async function enqueueOperation(
  ctx: Pick<ServiceContext, "jobs" | "faults">,
  job: JobName,
  computerId: string,
  operationId: string,
  extra: { reason?: string } = {},
): Promise<void> {
  ctx.faults?.afterOperationCommit?.();
  await ctx.jobs.send(job, { computerId, operationId, ...extra }, { id: jobIdOf(operationId) });
}

/**
 * A job handler's first step: claims the operation for this worker, only while it is queued
 * (first delivery) or running (a retry of the same job). A job pg-boss delivers again for an
 * operation that was interrupted, released or finished returns false and must not act: claimed
 * work is never replayed destructively (OPS-4, OPS-5).
 */
export async function beginOperation(
  ctx: Pick<ServiceContext, "db" | "workerId">,
  operationId: string,
  stage: string,
): Promise<boolean> {
  const [row] = await ctx.db
    .update(computerOperations)
    .set({ status: "running", stage, workerId: ctx.workerId ?? null, heartbeatAt: new Date() })
    .where(
      and(eq(computerOperations.id, operationId), inArray(computerOperations.status, ["queued", "running"])),
    )
    .returning({ id: computerOperations.id });
  return row !== undefined;
}

/** Progress and outcome; a released operation is the operator's and is never written again. */
export async function updateOperation(
  ctx: Pick<ServiceContext, "db">,
  operationId: string,
  patch: { status?: OperationStatus; stage?: string; error?: string | null },
): Promise<void> {
  const finished = patch.status === "succeeded" || patch.status === "failed";
  await ctx.db
    .update(computerOperations)
    .set({ ...patch, heartbeatAt: new Date(), ...(finished ? { finishedAt: new Date() } : {}) })
    .where(and(eq(computerOperations.id, operationId), ne(computerOperations.status, "released")));
}
