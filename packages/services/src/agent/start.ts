/**
 * Starting an agent on a bot: a run (holding the bot's fenced lease) plus a durable `agent.run`
 * job; the worker hosts one Pi session per run (ARCH-1) and ends the run when it is done.
 */
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
  });
  await ctx.jobs.send("agent.run", {
    runId: run.id,
    computerId: run.computerId,
    botId: run.botId,
    userId: caller.userId,
    fencingToken: lease.fencingToken,
    task: input.task,
  });
  return run;
}
