/**
 * Starting an agent on a bot: a run (holding the bot's fenced lease) plus a durable `agent.run`
 * job; the worker hosts one Pi session per run (ARCH-1) and ends the run when it is done.
 */
import { sql } from "drizzle-orm";
import { derivedJobId } from "../computers/operations.ts";
import type { Caller, ServiceContext } from "../context.ts";
import { AppError } from "../errors.ts";
import { type RunView, startRun } from "../runs/runs.ts";
import { parseAgentModel } from "./model-config.ts";

export async function startAgentRun(
  ctx: ServiceContext,
  caller: Caller,
  input: { computerId: string; botId: string; task: string },
): Promise<RunView> {
  if (!ctx.agentModel) {
    throw new AppError(
      "UNSUPPORTED",
      "no agent model is configured (set AGENT_MODEL, e.g. openrouter:<model id>)",
    );
  }
  parseAgentModel(ctx.agentModel);
  // A run's lease outlives gaps between tool calls; the worker renews it while the agent works.
  const { run, lease } = await startRun(ctx, caller, {
    computerId: input.computerId,
    botId: input.botId,
    leaseTtlMs: 120_000,
    task: input.task,
  });
  ctx.faults?.afterRunCommit?.();
  await ctx.jobs.send(
    "agent.run",
    {
      runId: run.id,
      computerId: run.computerId,
      botId: run.botId,
      userId: caller.userId,
      fencingToken: lease.fencingToken,
      task: input.task,
    },
    { id: agentJobIdOf(run.id) },
  );
  return run;
}

/**
 * The `agent.run` job id of a run, derived from it like an operation's (computers/operations.ts):
 * pg-boss keeps ids unique, so sending a run's job again never starts a second session.
 */
function agentJobIdOf(runId: string): string {
  return derivedJobId(`rakazo-agent-run:${runId}`);
}

/**
 * Agent runs whose job was never sent (the API died between committing the run and enqueueing
 * it): a run with a task that no worker began hosting within `graceMs` gets its job sent again,
 * under its own job id, so a job that was in fact sent is not duplicated.
 */
export async function republishAgentRuns(
  ctx: Pick<ServiceContext, "db" | "jobs" | "log">,
  policy: { graceMs: number },
): Promise<string[]> {
  const rows = await ctx.db.execute<{
    id: string;
    computer_id: string;
    bot_id: string;
    task: string;
    started_by: string;
    fencing_token: string | number;
  }>(sql`
    select r.id, r.computer_id, r.bot_id, r.task, r.started_by, l.fencing_token
    from runs r
    join execution_leases l on l.computer_id = r.computer_id and l.bot_id = r.bot_id and l.holder_id = r.id
    where r.status = 'running'
      and r.task is not null
      and r.started_by is not null
      and r.hosted_at is null
      and r.created_at < now() - ${policy.graceMs} * interval '1 millisecond'
    order by r.created_at
    limit 50`);
  const sent: string[] = [];
  for (const row of rows) {
    await ctx.jobs.send(
      "agent.run",
      {
        runId: row.id,
        computerId: row.computer_id,
        botId: row.bot_id,
        userId: row.started_by,
        fencingToken: Number(row.fencing_token),
        task: row.task,
      },
      { id: agentJobIdOf(row.id) },
    );
    ctx.log.info("run.republished", { runId: row.id, computerId: row.computer_id, botId: row.bot_id });
    sent.push(row.id);
  }
  return sent;
}

/** Records that this worker hosts the run from now on (the reconciler stops resending its job). */
export async function markRunHosted(ctx: Pick<ServiceContext, "db">, runId: string): Promise<void> {
  await ctx.db.execute(sql`update runs set hosted_at = coalesce(hosted_at, now()) where id = ${runId}`);
}
