import type { AgentTool, AgentToolResult } from "@mariozechner/pi-agent-core";
import type { TSchema } from "typebox";
import { SCHEMAS, type ToolName, type ToolParams } from "../schemas.ts";
import { type CommandActivity, recordCommandActivity } from "../services-internal.ts";
import type { ToolSession, ToolState } from "../session.ts";

export type ToolFactory = (session: ToolSession, state: ToolState) => AgentTool<TSchema>;

export function text(value: string, details: unknown = {}): AgentToolResult<unknown> {
  return { content: [{ type: "text", text: value }], details };
}

export function defineTool<N extends ToolName>(
  name: N,
  label: string,
  description: string,
  execute: (params: ToolParams<N>, signal?: AbortSignal) => Promise<AgentToolResult<unknown>>,
): AgentTool<TSchema> {
  return {
    name,
    label,
    description,
    parameters: SCHEMAS[name],
    execute: (_id, params, signal) => execute(params as ToolParams<N>, signal),
  };
}

/** What a mutating tool reports for the activity feed once it ran. */
export type ActivityFields = Omit<
  CommandActivity,
  "computerId" | "botId" | "runId" | "tool" | "ok" | "error"
>;

/**
 * Runs one mutating tool call: the teaching guard first (it may refuse), then the call, then
 * one `computer.command` activity event (TOOL-4) and the after-mutation hook (checkpoints),
 * whether the call succeeded or failed. Redaction happens in the recorder.
 */
export async function mutate<T>(
  session: ToolSession,
  tool: ToolName,
  args: unknown,
  run: () => Promise<{ value: T; activity: ActivityFields & { ok?: boolean } }>,
  onError: (error: Error) => ActivityFields,
): Promise<T> {
  const mutation = { computerId: session.computerId, botId: session.botId, runId: session.runId, tool, args };
  await session.hooks?.beforeMutation?.(mutation);
  const base = { computerId: session.computerId, botId: session.botId, runId: session.runId, tool };
  try {
    const { value, activity } = await run();
    const ok = activity.ok ?? true;
    await recordCommandActivity(session.ctx, { ...base, ...activity, ok });
    await session.hooks?.afterMutation?.(mutation, { ok });
    return value;
  } catch (error) {
    const message = (error as Error).message ?? String(error);
    await recordCommandActivity(session.ctx, {
      ...base,
      ...onError(error as Error),
      ok: false,
      error: message,
    });
    await session.hooks?.afterMutation?.(mutation, { ok: false, error: message });
    throw error;
  }
}

export { shellLine } from "../services-internal.ts";
