/**
 * Run liveness (OPS-4): a run's host keeps its execution lease alive while the agent works (the
 * worker's agent host, or an outside agent's run/heartbeat). A `running` run whose own lease
 * lapsed more than `graceMs` ago has no host any more; it ends `failed` so the bot is free for
 * a new run or a takeover (TKO-1) instead of staying "working" until someone calls stopBot.
 * A run waiting for a human (TKO-3) is hosted too — its session waits in the worker, which keeps
 * renewing the lease — so a waiting run whose lease lapsed lost its session and ends the same way.
 * So does a run waiting for a person's approval of one action (BRW-8): its pending approval can
 * no longer be decided (approval/decide answers CONFLICT) and leaves the approvals list.
 */
import { computers, runs } from "@rakazo/db";
import { eq, sql } from "drizzle-orm";
import type { ServiceContext } from "../context.ts";
import { isAppError } from "../errors.ts";
import { finishRun } from "./runs.ts";

export const LAPSED_RUN_ERROR = "the run's host stopped renewing its lease (worker gone); the run was ended";

export async function endLapsedRuns(ctx: ServiceContext, policy: { graceMs: number }): Promise<string[]> {
  const lapsed = await ctx.db.execute<{ id: string }>(sql`
    select r.id from runs r
    join execution_leases l on l.computer_id = r.computer_id and l.bot_id = r.bot_id
    where r.status in ('running', 'waiting_takeover', 'waiting_approval')
      and l.holder_id = r.id
      and l.expires_at < now() - ${policy.graceMs} * interval '1 millisecond'
    limit 50`);
  const ended: string[] = [];
  for (const { id } of lapsed) {
    const [run] = await ctx.db.select().from(runs).where(eq(runs.id, id)).limit(1);
    const [computer] = run
      ? await ctx.db.select().from(computers).where(eq(computers.id, run.computerId)).limit(1)
      : [];
    if (!run || !computer) continue;
    try {
      // Conditional on the run still being active: another replica or a person may have won.
      await finishRun(ctx, { run, computer, outcome: "fail", error: LAPSED_RUN_ERROR }, { force: true });
      ended.push(id);
      ctx.log.warn("run.lapsed", { runId: id, computerId: run.computerId, botId: run.botId });
    } catch (error) {
      if (!isAppError(error)) throw error;
    }
  }
  return ended;
}
