/**
 * A bot's runs on a computer, newest first, as the computer view lists them: outcome, the task,
 * when it started and ended, and how many tool calls its transcript holds; and the runs of a
 * space that wait for a person.
 */
import { computers, runEvents, runs } from "@rakazo/db";
import { and, asc, desc, eq, sql } from "drizzle-orm";
import { requireComputer } from "../computers/access.ts";
import { requireBotOnComputer } from "../computers/activity.ts";
import type { Caller, ServiceContext } from "../context.ts";
import { requireMembership } from "../identity/spaces.ts";
import { type RunView, toRunView } from "./runs.ts";

/** The first characters of a task a history row shows. */
const TASK_PREVIEW_CHARS = 200;

export interface RunHistoryEntry extends RunView {
  readonly task: string | null;
  readonly createdAt: string;
  readonly startedAt: string | null;
  readonly finishedAt: string | null;
  readonly toolCalls: number;
}

export async function runHistory(
  ctx: ServiceContext,
  caller: Caller,
  input: { computerId: string; botId: string; limit?: number },
): Promise<RunHistoryEntry[]> {
  const computer = await requireComputer(ctx, caller, input.computerId);
  await requireBotOnComputer(ctx, computer, input.botId);
  const rows = await ctx.db
    .select({
      run: runs,
      toolCalls: sql<number>`(select count(*)::int from ${runEvents} e where e.run_id = "runs"."id" and e.type = 'tool')`,
    })
    .from(runs)
    .where(and(eq(runs.computerId, computer.id), eq(runs.botId, input.botId)))
    .orderBy(desc(runs.createdAt), desc(runs.id))
    .limit(input.limit ?? 20);
  return rows.map(({ run, toolCalls }) => ({
    ...toRunView(run),
    task: run.task === null ? null : run.task.slice(0, TASK_PREVIEW_CHARS),
    createdAt: run.createdAt.toISOString(),
    startedAt: run.startedAt?.toISOString() ?? null,
    finishedAt: run.finishedAt?.toISOString() ?? null,
    toolCalls: Number(toolCalls),
  }));
}

export interface WaitingRun {
  readonly runId: string;
  readonly computerId: string;
  readonly botId: string;
  readonly reason: string | null;
  readonly since: string | null;
}

/** The space's runs that asked a person to take over (TKO-3), oldest first. */
export async function waitingRuns(
  ctx: ServiceContext,
  caller: Caller,
  input: { spaceId: string },
): Promise<WaitingRun[]> {
  await requireMembership(ctx, caller, input.spaceId);
  const rows = await ctx.db
    .select({ run: runs })
    .from(runs)
    .innerJoin(computers, eq(computers.id, runs.computerId))
    .where(and(eq(computers.spaceId, input.spaceId), eq(runs.status, "waiting_takeover")))
    .orderBy(asc(runs.waitingSince))
    .limit(100);
  return rows.map(({ run }) => ({
    runId: run.id,
    computerId: run.computerId,
    botId: run.botId,
    reason: run.takeoverReason,
    since: run.waitingSince?.toISOString() ?? null,
  }));
}
