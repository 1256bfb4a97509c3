/**
 * Runs: one agent working one bot on one computer. A run holds the bot's fenced execution
 * lease while it works (CMP-3). Completion keeps the bot's screen and browser for the next run
 * (CMP-6); failure and cancellation tear the screen down.
 */
import { newId, type RunStatus, runs } from "@rakazo/db";
import { and, eq, inArray, sql } from "drizzle-orm";
import { type ComputerRow, requireComputer } from "../computers/access.ts";
import { requireBotOnComputer, touchComputer } from "../computers/activity.ts";
import type { Caller, ServiceContext } from "../context.ts";
import { AppError } from "../errors.ts";
import { endControlForRun } from "./control-ends.ts";
import {
  acquireExecutionLease,
  assertFence,
  type Lease,
  releaseExecutionLease,
  renewExecutionLease,
} from "./leases.ts";

export type RunRow = typeof runs.$inferSelect;
export const ACTIVE_RUN_STATUSES = [
  "queued",
  "running",
  "waiting_takeover",
  "waiting_approval",
] as const satisfies RunStatus[];

export interface RunView {
  readonly id: string;
  readonly computerId: string;
  readonly botId: string;
  readonly status: RunStatus;
  readonly error: string | null;
  readonly takeoverReason: string | null;
}

export function toRunView(row: RunRow): RunView {
  return {
    id: row.id,
    computerId: row.computerId,
    botId: row.botId,
    status: row.status,
    error: row.error,
    takeoverReason: row.takeoverReason,
  };
}

/**
 * Hooks the surrounding system runs when a run ends: checkpoints (PER-2) and capability
 * revocation (CMP-6) plug in here, so this file stays about runs and leases.
 */
export interface RunHooks {
  onRunFinished?(ctx: ServiceContext, run: RunRow, computer: ComputerRow): Promise<void>;
}

export async function startRun(
  ctx: ServiceContext,
  caller: Caller,
  input: {
    computerId: string;
    botId: string;
    leaseTtlMs?: number;
    /** An agent run's task, kept so its job can be sent again (agent/start.ts). */
    task?: string;
  },
): Promise<{ run: RunView; lease: Lease }> {
  const computer = await requireComputer(ctx, caller, input.computerId);
  await requireBotOnComputer(ctx, computer, input.botId);
  const runId = newId("run");
  const lease = await acquireExecutionLease(ctx, {
    computerId: computer.id,
    botId: input.botId,
    holderId: runId,
    ...(input.leaseTtlMs !== undefined ? { ttlMs: input.leaseTtlMs } : {}),
  });
  const [row] = await ctx.db
    .insert(runs)
    .values({
      id: runId,
      computerId: computer.id,
      botId: input.botId,
      status: "running",
      startedAt: new Date(),
      ...(input.task !== undefined ? { task: input.task, startedBy: caller.userId } : {}),
    })
    .returning();
  if (!row) throw new AppError("INTERNAL", "run insert returned nothing");
  // The run drives the bot now: a person's control of it ends (CMP-3, TKO-1).
  await endControlForRun(ctx, computer, input.botId, runId);
  await touchComputer(ctx, computer.id);
  ctx.log.info("run.started", {
    runId,
    computerId: computer.id,
    botId: input.botId,
    fencingToken: lease.fencingToken,
  });
  return { run: toRunView(row), lease };
}

/** A run of a computer the caller can see, or NOT_FOUND. */
export async function requireRun(ctx: ServiceContext, caller: Caller, runId: string) {
  const [row] = await ctx.db.select().from(runs).where(eq(runs.id, runId)).limit(1);
  if (!row) throw new AppError("NOT_FOUND", "run not found");
  const computer = await requireComputer(ctx, caller, row.computerId).catch(() => {
    throw new AppError("NOT_FOUND", "run not found");
  });
  return { run: row, computer };
}

export async function getRun(
  ctx: ServiceContext,
  caller: Caller,
  input: { runId: string },
): Promise<RunView> {
  return toRunView((await requireRun(ctx, caller, input.runId)).run);
}

/** Keeps the run's lease alive; a superseded holder learns it here (STALE_LEASE). */
export async function heartbeatRun(
  ctx: ServiceContext,
  caller: Caller,
  input: { runId: string; fencingToken: number; leaseTtlMs?: number },
): Promise<Lease> {
  const { run } = await requireRun(ctx, caller, input.runId);
  assertActive(run);
  const lease = await renewExecutionLease(ctx, {
    computerId: run.computerId,
    botId: run.botId,
    fencingToken: input.fencingToken,
    ...(input.leaseTtlMs !== undefined ? { ttlMs: input.leaseTtlMs } : {}),
  });
  await touchComputer(ctx, run.computerId);
  return lease;
}

/** The agent asks a human for protected input or judgment (TKO-3). */
export async function requestTakeover(
  ctx: ServiceContext,
  caller: Caller,
  input: { runId: string; fencingToken: number; reason: string },
): Promise<RunView> {
  const { run } = await requireRun(ctx, caller, input.runId);
  await assertFence(ctx, { computerId: run.computerId, botId: run.botId, fencingToken: input.fencingToken });
  const [row] = await ctx.db
    .update(runs)
    .set({ status: "waiting_takeover", takeoverReason: input.reason, waitingSince: sql`now()` })
    .where(and(eq(runs.id, run.id), eq(runs.status, "running")))
    .returning();
  if (!row) throw new AppError("CONFLICT", `run is ${run.status}, not running`);
  // The request restarts the idle timer; non-billing providers stay awake longer (idle.ts).
  await touchComputer(ctx, run.computerId);
  ctx.log.info("run.waiting_takeover", { runId: run.id, botId: run.botId });
  return toRunView(row);
}

const FINAL: Record<"complete" | "fail" | "cancel", RunStatus> = {
  complete: "completed",
  fail: "failed",
  cancel: "canceled",
};

/**
 * Ends a run. The run's own fencing token is required (a superseded holder cannot end the
 * run that replaced it); `cancel` from a person (stopBot) passes `force`.
 */
export async function finishRun(
  ctx: ServiceContext,
  input: { run: RunRow; computer: ComputerRow; outcome: "complete" | "fail" | "cancel"; error?: string },
  fencing: { fencingToken: number } | { force: true },
): Promise<RunView> {
  const { run, computer } = input;
  if ("fencingToken" in fencing) {
    await assertFence(ctx, {
      computerId: run.computerId,
      botId: run.botId,
      fencingToken: fencing.fencingToken,
    });
  }
  const [row] = await ctx.db
    .update(runs)
    .set({ status: FINAL[input.outcome], error: input.error ?? null, finishedAt: sql`now()` })
    .where(and(eq(runs.id, run.id), inArray(runs.status, [...ACTIVE_RUN_STATUSES])))
    .returning();
  if (!row) throw new AppError("CONFLICT", `run is already ${run.status}`);
  if ("fencingToken" in fencing) {
    await releaseExecutionLease(ctx, {
      computerId: run.computerId,
      botId: run.botId,
      fencingToken: fencing.fencingToken,
    });
  }
  if (input.outcome !== "complete") await tearDownBotScreen(ctx, computer, run.botId);
  await ctx.runHooks?.onRunFinished?.(ctx, row, computer);
  ctx.log.info(`run.${FINAL[input.outcome]}`, { runId: run.id, botId: run.botId });
  return toRunView(row);
}

/** Failed and canceled runs (and deletion) tear the bot's screen down; the profile stays (CMP-2, CMP-6). */
export async function tearDownBotScreen(
  ctx: ServiceContext,
  computer: ComputerRow,
  botId: string,
): Promise<void> {
  if (computer.state !== "running" || !computer.providerRef || computer.providerKind !== ctx.provider.kind)
    return;
  const desktop = ctx.provider.sandbox(computer.providerRef).desktop;
  if (!desktop) return;
  try {
    await desktop.release(botId);
  } catch (error) {
    ctx.log.warn("run.screen_teardown_failed", { computerId: computer.id, botId, error });
  }
}

function assertActive(run: RunRow): void {
  if (!(ACTIVE_RUN_STATUSES as readonly string[]).includes(run.status)) {
    throw new AppError("CONFLICT", `run is ${run.status}`);
  }
}

export async function activeRunOf(
  ctx: Pick<ServiceContext, "db">,
  input: { computerId: string; botId: string },
): Promise<RunRow | undefined> {
  const [row] = await ctx.db
    .select()
    .from(runs)
    .where(
      and(
        eq(runs.computerId, input.computerId),
        eq(runs.botId, input.botId),
        inArray(runs.status, [...ACTIVE_RUN_STATUSES]),
      ),
    )
    .limit(1);
  return row;
}

/** The agent's side: end its own run with its fencing token. */
export async function endRun(
  ctx: ServiceContext,
  caller: Caller,
  input: { runId: string; fencingToken: number; outcome: "complete" | "fail" | "cancel"; error?: string },
): Promise<RunView> {
  const { run, computer } = await requireRun(ctx, caller, input.runId);
  return finishRun(
    ctx,
    { run, computer, outcome: input.outcome, ...(input.error !== undefined ? { error: input.error } : {}) },
    { fencingToken: input.fencingToken },
  );
}
