/**
 * One Pi agent session per run (ARCH-1): the agent runs in this process and calls computer
 * tools; nothing of it runs in the computer. The model comes from configuration
 * (`AGENT_MODEL=<provider>:<id>`, parsed by the app and passed in) through pi-ai.
 *
 * This lives beside the tools, not in @rakazo/services: the tools call service verbs, so the
 * session that owns them sits above services, and services stays free of any agent framework.
 */
import { Agent, type AgentMessage } from "@mariozechner/pi-agent-core";
import { type Api, getModels, type KnownProvider, type Model } from "@mariozechner/pi-ai";
import type { AgentModelRef } from "./services-internal.ts";
import type { ToolSession } from "./session.ts";
import { capabilitiesOf, computerSystemPrompt, createComputerTools } from "./toolset.ts";

/** A model id pi-ai does not list yet is still usable on OpenRouter (OpenAI-compatible API). */
function openRouterModel(modelId: string, vision: boolean): Model<"openai-completions"> {
  return {
    id: modelId,
    name: modelId,
    api: "openai-completions",
    provider: "openrouter",
    baseUrl: "https://openrouter.ai/api/v1",
    reasoning: false,
    input: vision ? ["text", "image"] : ["text"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: 128_000,
    maxTokens: 16_384,
  };
}

/**
 * The pi-ai model for `ref`. `vision` overrides what pi-ai knows (and is required to claim
 * vision for a model pi-ai does not list).
 */
export function resolveAgentModel(ref: AgentModelRef, options: { vision?: boolean } = {}): Model<Api> {
  const known = (getModels(ref.provider as KnownProvider) ?? []).find((m) => m.id === ref.modelId) as
    | Model<Api>
    | undefined;
  if (known) {
    return options.vision === undefined
      ? known
      : { ...known, input: options.vision ? ["text", "image"] : ["text"] };
  }
  if (ref.provider === "openrouter") return openRouterModel(ref.modelId, options.vision ?? false);
  throw new Error(`unknown model ${ref.provider}:${ref.modelId}`);
}

export function modelHasVision(model: Model<Api>): boolean {
  return model.input.includes("image");
}

export interface ToolCallRecord {
  readonly name: string;
  readonly args: unknown;
  readonly isError: boolean;
  /** The text the tool returned (images left out). */
  readonly text: string;
}

export interface RunAgentOptions {
  /** The run's session; `model.vision` is derived from `model` when omitted. */
  readonly session: Omit<ToolSession, "model"> & { model?: ToolSession["model"] };
  readonly model: Model<Api>;
  /** Keys per pi-ai provider ("openrouter"); the app reads them from its environment. */
  readonly getApiKey?: (provider: string) => string | undefined;
  /** Prepended to the computer part of the system prompt. */
  readonly instructions?: string;
}

export interface RunAgent {
  readonly agent: Agent;
  /** Every tool call of the session, in order, as it finished. */
  readonly toolCalls: ToolCallRecord[];
}

export function createRunAgent(options: RunAgentOptions): RunAgent {
  const session: ToolSession = {
    ...options.session,
    model: options.session.model ?? { vision: modelHasVision(options.model) },
  };
  const caps = capabilitiesOf(session);
  const tools = createComputerTools(session, caps);
  const systemPrompt = [options.instructions, computerSystemPrompt(caps)].filter(Boolean).join("\n\n");
  const agent = new Agent({
    initialState: { systemPrompt, model: options.model, tools, thinkingLevel: "off" },
    // Computer tools act on one screen and one workspace: never in parallel.
    toolExecution: "sequential",
    sessionId: session.runId,
    ...(options.getApiKey ? { getApiKey: options.getApiKey } : {}),
  });
  const toolCalls: ToolCallRecord[] = [];
  const argsById = new Map<string, unknown>();
  agent.subscribe((event) => {
    if (event.type === "tool_execution_start") argsById.set(event.toolCallId, event.args);
    if (event.type !== "tool_execution_end") return;
    const content = (event.result?.content ?? []) as { type: string; text?: string }[];
    toolCalls.push({
      name: event.toolName,
      args: argsById.get(event.toolCallId),
      isError: event.isError,
      text: content
        .filter((c) => c.type === "text")
        .map((c) => c.text ?? "")
        .join("\n"),
    });
  });
  return { agent, toolCalls };
}

export interface AgentTaskOutcome {
  readonly messages: AgentMessage[];
  readonly toolCalls: ToolCallRecord[];
  /** The last assistant turn's error, if the model call failed. */
  readonly error?: string;
}

/** Runs one task to the end: the caller owns the run (startRun before, endRun after). */
export async function runAgentTask(options: RunAgentOptions & { task: string }): Promise<AgentTaskOutcome> {
  const { agent, toolCalls } = createRunAgent(options);
  await agent.prompt(options.task);
  await agent.waitForIdle();
  const error = agent.state.errorMessage;
  return { messages: agent.state.messages, toolCalls, ...(error ? { error } : {}) };
}
