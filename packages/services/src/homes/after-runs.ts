/**
 * Checkpoints at run boundaries (PER-2, PER-7): when a run completes or fails, its computer's
 * workspace is saved — unless another bot still works there or a person holds control, in which
 * case it is deferred: the last finishing run (or the idle/stop job) saves.
 */
import { computers, controlLeases, executionLeases } from "@rakazo/db";
import { and, eq, gt, isNotNull, sql } from "drizzle-orm";
import { enqueueOperation, recordOperation } from "../computers/operations.ts";
import type { ServiceContext } from "../context.ts";
import type { RunHooks } from "../runs/runs.ts";
import { checkpointComputerHome } from "./checkpoint.ts";
import { quiesceThenRelaunch } from "./quiesce.ts";

/** The RunHooks every app installs: queue a checkpoint when a run ends. */
export const checkpointAfterRuns: RunHooks = {
  async onRunFinished(ctx, run) {
    const operationId = await recordOperation(ctx.db, run.computerId, "checkpoint", "queued");
    await enqueueOperation(ctx, "computer.checkpoint", run.computerId, operationId, {
      reason: `run_${run.status}`,
    });
  },
};

/** True while some bot holds a live execution lease or a person a live control lease. */
export async function computerInUse(ctx: Pick<ServiceContext, "db">, computerId: string): Promise<boolean> {
  const [execution] = await ctx.db
    .select({ botId: executionLeases.botId })
    .from(executionLeases)
    .where(
      and(
        eq(executionLeases.computerId, computerId),
        isNotNull(executionLeases.holderId),
        gt(executionLeases.expiresAt, sql`now()`),
      ),
    )
    .limit(1);
  if (execution) return true;
  const [control] = await ctx.db
    .select({ botId: controlLeases.botId })
    .from(controlLeases)
    .where(
      and(
        eq(controlLeases.computerId, computerId),
        isNotNull(controlLeases.userId),
        gt(controlLeases.expiresAt, sql`now()`),
      ),
    )
    .limit(1);
  return control !== undefined;
}

export type RunCheckpointOutcome = "saved" | "unchanged" | "deferred" | "skipped";

/** The checkpoint job's work: defer while the computer is in use, else save. */
export async function checkpointUnlessInUse(
  ctx: ServiceContext,
  input: { computerId: string; reason: string },
): Promise<RunCheckpointOutcome> {
  const [computer] = await ctx.db
    .select({
      state: computers.state,
      providerKind: computers.providerKind,
      providerRef: computers.providerRef,
    })
    .from(computers)
    .where(eq(computers.id, input.computerId))
    .limit(1);
  if (computer?.state !== "running") return "skipped";
  if (await computerInUse(ctx, input.computerId)) {
    ctx.log.info("computer.home_checkpoint_deferred", { computerId: input.computerId, reason: input.reason });
    return "deferred";
  }
  // PER-7: the browsers close (profiles flushed) for the save and come back after it (CMP-6).
  const ref = computer.providerKind === ctx.provider.kind ? computer.providerRef : null;
  const result = await checkpointComputerHome(ctx, {
    computerId: input.computerId,
    reason: input.reason,
    quiesce: ref ? quiesceThenRelaunch(ctx, ref) : undefined,
  });
  return result.status;
}
