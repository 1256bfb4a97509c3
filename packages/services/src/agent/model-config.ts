/**
 * The agent's model, chosen by configuration (`AGENT_MODEL=<provider>:<model id>`, e.g.
 * `openrouter:anthropic/claude-sonnet-4`). Parsed here; apps read the environment and pass the
 * string in. Resolution to a concrete model happens where the agent framework lives.
 */
import { AppError } from "../errors.ts";

export interface AgentModelRef {
  readonly provider: string;
  readonly modelId: string;
}

export function parseAgentModel(value: string): AgentModelRef {
  const at = value.indexOf(":");
  const provider = value.slice(0, at).trim();
  const modelId = value.slice(at + 1).trim();
  if (at <= 0 || !/^[a-z0-9-]+$/.test(provider) || modelId === "") {
    throw new AppError(
      "INVALID_INPUT",
      `AGENT_MODEL must look like "openrouter:<model id>", not ${JSON.stringify(value)}`,
    );
  }
  return { provider, modelId };
}
