/**
 * The worker's side of the computer lifecycle: one handler per job of the catalog. Handlers
 * are idempotent — pg-boss may deliver a job again after a crash — and every state change is
 * conditional on the state the request left, so a later request (e.g. delete) always wins.
 */
import { computers } from "@rakazo/db";
import type { JobContext, JobHandlers } from "@rakazo/jobs";
import { isSandboxError } from "@rakazo/sandbox";
import { and, eq } from "drizzle-orm";
import type { ServiceContext } from "../context.ts";
import { isAppError } from "../errors.ts";
import { checkpointUnlessInUse } from "../homes/after-runs.ts";
import { checkpointComputerHome } from "../homes/checkpoint.ts";
import { providerMountsHome } from "../homes/context.ts";
import { destroyComputerHome } from "../homes/destroy.ts";
import { closeBrowsers } from "../homes/quiesce.ts";
import { prepareComputerHome, restoreComputerHome } from "../homes/restore.ts";
import { runRecoverJob, runUpdateJob } from "../operations/update.ts";
import { markRunningIfProvisioning } from "./mark-running.ts";
import { beginOperation, updateOperation } from "./operations.ts";
import { provisionRequestOf } from "./provision-spec.ts";

type ComputerJob = { computerId: string; operationId: string };

async function loadComputer(ctx: ServiceContext, computerId: string) {
  const [row] = await ctx.db.select().from(computers).where(eq(computers.id, computerId)).limit(1);
  return row;
}

/** The stored ref, only if it belongs to the configured provider kind (PRV-3). */
function ownRef(
  ctx: ServiceContext,
  row: { providerKind: string; providerRef: string | null },
): string | null {
  return row.providerKind === ctx.provider.kind ? row.providerRef : null;
}

/** A delivery for an operation no longer ours to run (interrupted, released, finished). */
function skipped(ctx: ServiceContext, job: ComputerJob): void {
  ctx.log.warn("operation.delivery_skipped", { ...job });
}

/**
 * What an operation's `error` (and the computer's `lastError`) says: the stable code first when
 * the error has one (`STORAGE_FULL: …`, `STORAGE_ERROR: …`, `COMPUTER_GONE: …`), so clients and
 * operators can match on it without parsing prose.
 */
function failureText(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown })?.code;
  return typeof code === "string" && /^[A-Z][A-Z0-9_]+$/.test(code) && !message.startsWith(code)
    ? `${code}: ${message}`
    : message;
}

async function failOrRetry(
  ctx: ServiceContext,
  job: ComputerJob & { context: JobContext },
  error: unknown,
  failedState: "failed" | "running" | null,
): Promise<void> {
  const message = failureText(error);
  ctx.log.error("computer.job_failed", { ...job, context: undefined, jobId: job.context.jobId, error });
  if (!job.context.isLastAttempt) {
    await updateOperation(ctx, job.operationId, { stage: "retrying", error: message });
    throw error;
  }
  await updateOperation(ctx, job.operationId, { status: "failed", error: message });
  if (failedState) {
    await ctx.db
      .update(computers)
      .set({ state: failedState, lastError: message })
      .where(eq(computers.id, job.computerId));
  }
}

export async function runProvisionJob(
  ctx: ServiceContext,
  job: ComputerJob,
  context: JobContext,
): Promise<void> {
  if (!(await beginOperation(ctx, job.operationId, "provisioning"))) return skipped(ctx, job);
  const computer = await loadComputer(ctx, job.computerId);
  if (computer?.state !== "provisioning") {
    await updateOperation(ctx, job.operationId, {
      status: "failed",
      error: `computer is ${computer?.state ?? "missing"}; provisioning skipped`,
    });
    return;
  }
  try {
    // PER-2: a machine that mounts its home gets it brought up to the stored revision first.
    if (providerMountsHome(ctx)) await prepareComputerHome(ctx, { computer });
    const result = await ctx.provider.provision(provisionRequestOf(computer, ownRef(ctx, computer)));
    // A new or replacement machine imports the latest stored workspace before use (PER-2, PRV-3).
    if (result.replaced && !providerMountsHome(ctx)) {
      await updateOperation(ctx, job.operationId, { stage: "restoring" });
      try {
        await restoreComputerHome(ctx, {
          computer: { ...computer, providerKind: ctx.provider.kind, providerRef: result.ref },
          sandbox: ctx.provider.sandbox(result.ref),
        });
      } catch (error) {
        await ctx.provider.destroy(result.ref);
        throw error;
      }
    }
    if (!(await markRunningIfProvisioning(ctx, computer.id, result.ref))) {
      // Deleted (or otherwise moved on) while we provisioned: leave no orphaned machine.
      await ctx.provider.destroy(result.ref);
      await updateOperation(ctx, job.operationId, {
        status: "failed",
        error: "computer changed during provisioning",
      });
      return;
    }
    await updateOperation(ctx, job.operationId, { status: "succeeded", stage: "running" });
    ctx.log.info("computer.running", { computerId: computer.id, replaced: result.replaced });
  } catch (error) {
    await failOrRetry(ctx, { ...job, context }, error, "failed");
  }
}

export async function runStopJob(ctx: ServiceContext, job: ComputerJob, context: JobContext): Promise<void> {
  if (!(await beginOperation(ctx, job.operationId, "saving"))) return skipped(ctx, job);
  const [computer, operation] = await Promise.all([
    loadComputer(ctx, job.computerId),
    ctx.db.query.computerOperations.findFirst({ where: (o, { eq }) => eq(o.id, job.operationId) }),
  ]);
  if (computer?.state !== "stopping") {
    await updateOperation(ctx, job.operationId, {
      status: "failed",
      error: "computer is no longer stopping",
    });
    return;
  }
  try {
    const ref = ownRef(ctx, computer);
    // PER-2/PER-7: close browsers cleanly (profiles flushed), then save, then stop. Only the
    // browsers: the displays and screen servers end with the machine, and once every browser
    // is closed the machine has nothing left that needs a grace period to stop (`quiesced`).
    let quiesced = false;
    await checkpointComputerHome(ctx, {
      computerId: computer.id,
      reason: operation?.kind === "idle_shutdown" ? "idle" : "stop",
      quiesce: ref
        ? async () => {
            quiesced = (await closeBrowsers(ctx, ref)).all;
          }
        : undefined,
    }).catch(async (error: unknown) => {
      // PRV-3: a machine killed or expired behind our back has nothing left to save. The last
      // checkpoint stands; the next start replaces the machine and restores it.
      if (!(ref && isAppError(error) && error.code === "COMPUTER_GONE")) throw error;
      if ((await ctx.provider.status(ref)) !== "missing") throw error;
      ctx.log.warn("computer.stop_machine_gone", {
        computerId: computer.id,
        revision: computer.homeRevision,
      });
    });
    // The stage is written while the machine stops, and lands before any failure is recorded.
    const staged = updateOperation(ctx, job.operationId, { stage: "stopping" });
    try {
      if (ref) {
        await ctx.provider.stop(ref, { quiesced }).catch((error: unknown) => {
          // A machine that is already gone is stopped; the next start replaces it.
          if (!isSandboxError(error, "SANDBOX_GONE")) throw error;
        });
      }
    } finally {
      await staged;
    }
    await ctx.db
      .update(computers)
      .set({ state: "stopped" })
      .where(and(eq(computers.id, computer.id), eq(computers.state, "stopping")));
    await updateOperation(ctx, job.operationId, { status: "succeeded", stage: "stopped" });
    ctx.log.info("computer.stopped", { computerId: computer.id });
  } catch (error) {
    await failOrRetry(ctx, { ...job, context }, error, "running");
  }
}

export async function runDeleteJob(
  ctx: ServiceContext,
  job: ComputerJob,
  context: JobContext,
): Promise<void> {
  if (!(await beginOperation(ctx, job.operationId, "destroying"))) return skipped(ctx, job);
  const computer = await loadComputer(ctx, job.computerId);
  if (!computer || computer.state === "deleted") {
    await updateOperation(ctx, job.operationId, { status: "succeeded", stage: "deleted" });
    return;
  }
  try {
    const ref = ownRef(ctx, computer);
    if (ref) await ctx.provider.destroy(ref);
    // PER-5: the wrapped data key goes first (crypto-shredding), then the stored objects.
    await destroyComputerHome(ctx, computer);
    await ctx.db
      .update(computers)
      .set({ state: "deleted", providerRef: null, deletedAt: new Date() })
      .where(eq(computers.id, computer.id));
    await updateOperation(ctx, job.operationId, { status: "succeeded", stage: "deleted" });
    ctx.log.info("computer.deleted", { computerId: computer.id });
  } catch (error) {
    await failOrRetry(ctx, { ...job, context }, error, null);
  }
}

/** Run-boundary checkpoints (PER-2), deferred while the computer is in use (PER-7). */
export async function runCheckpointJob(
  ctx: ServiceContext,
  job: ComputerJob & { reason?: string | undefined },
  context: JobContext,
): Promise<void> {
  if (!(await beginOperation(ctx, job.operationId, "saving"))) return skipped(ctx, job);
  try {
    const outcome = await checkpointUnlessInUse(ctx, {
      computerId: job.computerId,
      reason: job.reason ?? "run_finished",
    });
    await updateOperation(ctx, job.operationId, { status: "succeeded", stage: outcome });
  } catch (error) {
    await failOrRetry(ctx, { ...job, context }, error, null);
  }
}

/** Every lifecycle job; agent runs are hosted by the worker app itself (it owns the agent framework). */
export function computerJobHandlers(ctx: ServiceContext): Omit<JobHandlers, "agent.run"> {
  return {
    "computer.checkpoint": (payload, context) => runCheckpointJob(ctx, payload, context),
    "computer.provision": (payload, context) => runProvisionJob(ctx, payload, context),
    "computer.stop": (payload, context) => runStopJob(ctx, payload, context),
    "computer.delete": (payload, context) => runDeleteJob(ctx, payload, context),
    "computer.update": (payload, context) => runUpdateJob(ctx, payload, context),
    "computer.recover": (payload, context) => runRecoverJob(ctx, payload, context),
  };
}
