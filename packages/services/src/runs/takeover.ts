/**
 * Human takeover of one bot's screen (TKO-1, TKO-2). Control is an exclusive, fenced lease
 * for one user. On a Team computer a bot that is working (live execution lease or active run)
 * cannot be taken over — "Stop the bot first" — unless its run asked for a human.
 */
import { runs } from "@rakazo/db";
import { and, eq } from "drizzle-orm";
import { requireComputer } from "../computers/access.ts";
import { requireBotOnComputer, touchComputer } from "../computers/activity.ts";
import type { Caller, ServiceContext } from "../context.ts";
import { AppError } from "../errors.ts";
import { assertNotReserved } from "../operations/reservation.ts";
import { controlSelector, revokeScreenCapabilities } from "../screens/revoke.ts";
import { markControlled } from "./control-ends.ts";
import {
  acquireControlLease,
  type Lease,
  liveExecutionLease,
  releaseControlLease,
  revokeExecutionLease,
} from "./leases.ts";
import { activeRunOf, finishRun, type RunView } from "./runs.ts";
import { appendRunEvent } from "./transcript.ts";

export const STOP_THE_BOT_FIRST = "Stop the bot first";

export async function takeControl(
  ctx: ServiceContext,
  caller: Caller,
  input: { computerId: string; botId: string; ttlMs?: number },
): Promise<Lease> {
  const computer = await requireComputer(ctx, caller, input.computerId);
  await requireBotOnComputer(ctx, computer, input.botId);
  await assertNotReserved(ctx, computer.id);
  const key = { computerId: computer.id, botId: input.botId };
  if (computer.mode === "team") {
    const run = await activeRunOf(ctx, key);
    const waiting = run?.status === "waiting_takeover";
    if (!waiting && (run || (await liveExecutionLease(ctx, key)))) {
      throw new AppError("TAKEOVER_CONFLICT", STOP_THE_BOT_FIRST, { runId: run?.id ?? null });
    }
  }
  const lease = await acquireControlLease(ctx, {
    ...key,
    userId: caller.userId,
    ...(input.ttlMs !== undefined ? { ttlMs: input.ttlMs } : {}),
  });
  await markControlled(ctx, computer, input.botId, true);
  await touchComputer(ctx, computer.id);
  ctx.log.info("control.taken", { ...key, userId: caller.userId, fencingToken: lease.fencingToken });
  return lease;
}

/** Gives control back; a run that waited for the human continues. */
export async function releaseControl(
  ctx: ServiceContext,
  caller: Caller,
  input: { computerId: string; botId: string },
): Promise<{ released: true; resumedRunId: string | null }> {
  const computer = await requireComputer(ctx, caller, input.computerId);
  const key = { computerId: computer.id, botId: input.botId };
  if (!(await releaseControlLease(ctx, { ...key, userId: caller.userId }))) {
    throw new AppError("NOT_IN_CONTROL", "you do not control this screen");
  }
  // TKO-1: the released person's control capabilities stop at once (live viewers closed).
  await revokeScreenCapabilities(ctx, computer, [controlSelector(input.botId, caller.userId)]).catch(
    (error: unknown) => ctx.log.warn("screen.revoke_failed", { ...key, error }),
  );
  const [resumed] = await ctx.db
    .update(runs)
    .set({ status: "running", waitingSince: null })
    .where(
      and(eq(runs.computerId, computer.id), eq(runs.botId, input.botId), eq(runs.status, "waiting_takeover")),
    )
    .returning({ id: runs.id });
  await markControlled(ctx, computer, input.botId, false);
  await touchComputer(ctx, computer.id);
  ctx.log.info("control.released", { ...key, userId: caller.userId, resumedRunId: resumed?.id ?? null });
  return { released: true, resumedRunId: resumed?.id ?? null };
}

/** Stops the bot's work on this computer: cancels its run and ends its execution lease. */
export async function stopBot(
  ctx: ServiceContext,
  caller: Caller,
  input: { computerId: string; botId: string },
): Promise<{ canceledRunId: string | null }> {
  const computer = await requireComputer(ctx, caller, input.computerId);
  await requireBotOnComputer(ctx, computer, input.botId);
  const key = { computerId: computer.id, botId: input.botId };
  const run = await activeRunOf(ctx, key);
  // Revoke first: from here on the old holder's actions are refused, even mid-cancel.
  await revokeExecutionLease(ctx, key);
  let canceled: RunView | undefined;
  if (run) canceled = await finishRun(ctx, { run, computer, outcome: "cancel" }, { force: true });
  // The run's transcript ends with who ended it (the worker's session writes nothing more).
  if (canceled) {
    await appendRunEvent(ctx, {
      runId: canceled.id,
      computerId: computer.id,
      type: "status",
      payload: { status: "canceled", by: "person" },
    });
  }
  ctx.log.info("bot.stopped", { ...key, canceledRunId: canceled?.id ?? null });
  return { canceledRunId: canceled?.id ?? null };
}
