/**
 * Whether this deployment can run agents, so the web app's task box says what to set before a
 * person types a task (instead of `agent/run` refusing at submit).
 */
import type { ServiceContext } from "../context.ts";
import { isAppError } from "../errors.ts";
import { parseAgentModel } from "./model-config.ts";

export interface AgentStatus {
  readonly configured: boolean;
  /** `AGENT_MODEL` as configured (a model name, not a secret), or null. */
  readonly model: string | null;
  /** What is wrong when not configured, in words that name the variables to set. */
  readonly problem: string | null;
}

/**
 * The API knows `AGENT_MODEL`; the provider's key (`OPENROUTER_API_KEY`) is the worker's, so a
 * missing model names both: they are set together.
 */
export async function agentStatus(ctx: Pick<ServiceContext, "agentModel">): Promise<AgentStatus> {
  if (!ctx.agentModel) {
    return {
      configured: false,
      model: null,
      problem:
        "No agent model is configured. Set AGENT_MODEL (e.g. openrouter:anthropic/claude-sonnet-4) and OPENROUTER_API_KEY for the API and the worker, then restart them.",
    };
  }
  try {
    parseAgentModel(ctx.agentModel);
  } catch (error) {
    if (!isAppError(error)) throw error;
    return { configured: false, model: ctx.agentModel, problem: error.message };
  }
  return { configured: true, model: ctx.agentModel, problem: null };
}
