/**
 * Activity (TOOL-4): every mutating tool call becomes one `computer.command` event, stored in
 * `activity_events` and announced with `pg_notify` in the same statement's transaction, so every
 * API replica's feed (./feed.ts) streams it live. Read-only tools are never recorded.
 *
 * Everything is redacted before it is stored: the command, the output tail, the one-line summary
 * and every other payload field (packages/log redaction: tokens, passwords, Authorization values,
 * URL credentials).
 */
import { activityEvents, newId } from "@rakazo/db";
import { redactText, redactValue } from "@rakazo/log";
import { sql } from "drizzle-orm";
import type { ServiceContext } from "../context.ts";

export const ACTIVITY_CHANNEL = "rakazo_activity";
export const COMMAND_EVENT = "computer.command";
/** How much of a command's output an event keeps (the end, where errors are). */
export const OUTPUT_TAIL_CHARS = 2_000;

export interface CommandActivity {
  readonly computerId: string;
  /** The bot acted on; null for a computer-wide call (an API `computer/exec` without a lease). */
  readonly botId: string | null;
  readonly runId?: string | null;
  /** The tool that acted: shell, write_file, browser_act, … */
  readonly tool: string;
  /** One human-readable line: "write_file notes/a.txt (120 bytes)". */
  readonly line: string;
  readonly ok: boolean;
  readonly error?: string;
  /** shell only: the command as the bot ran it (redacted here). */
  readonly command?: string;
  readonly exitCode?: number;
  /** shell only: the output's tail (stdout; redacted here). */
  readonly output?: string;
  /** shell only: the error stream's tail, kept apart from `output` (redacted here). */
  readonly stderr?: string;
  readonly details?: Record<string, unknown>;
}

export interface ActivityEvent {
  readonly id: string;
  readonly computerId: string;
  readonly botId: string | null;
  readonly runId: string | null;
  readonly type: string;
  readonly payload: Record<string, unknown>;
  readonly createdAt: string;
}

/** The stored payload of a command event, redacted. Exported for tests and other recorders. */
export function commandPayload(activity: CommandActivity): Record<string, unknown> {
  const payload: Record<string, unknown> = {
    tool: activity.tool,
    line: redactText(activity.line),
    ok: activity.ok,
  };
  if (activity.error !== undefined) payload.error = redactText(activity.error);
  if (activity.command !== undefined) payload.command = redactText(activity.command);
  if (activity.exitCode !== undefined) payload.exitCode = activity.exitCode;
  if (activity.output !== undefined) {
    payload.outputTail = redactText(activity.output.slice(-OUTPUT_TAIL_CHARS));
    payload.outputTruncated = activity.output.length > OUTPUT_TAIL_CHARS;
  }
  if (activity.stderr !== undefined && activity.stderr !== "") {
    payload.stderrTail = redactText(activity.stderr.slice(-OUTPUT_TAIL_CHARS));
    payload.stderrTruncated = activity.stderr.length > OUTPUT_TAIL_CHARS;
  }
  if (activity.details !== undefined) payload.details = redactValue(activity.details);
  return payload;
}

/** Stores and announces one command event. Never throws for the tool's sake: failures are logged. */
export async function recordCommandActivity(
  ctx: Pick<ServiceContext, "db" | "log">,
  activity: CommandActivity,
): Promise<ActivityEvent | undefined> {
  const id = newId("event");
  const payload = commandPayload(activity);
  try {
    // One statement: the insert and the notification commit (or roll back) together.
    const rows = await ctx.db.execute<{ created_at: Date | string }>(sql`
      with inserted as (
        insert into ${activityEvents} (id, computer_id, bot_id, run_id, type, payload)
        values (${id}, ${activity.computerId}, ${activity.botId}, ${activity.runId ?? null},
                ${COMMAND_EVENT}, ${JSON.stringify(payload)}::jsonb)
        returning created_at
      )
      select created_at, pg_notify(${ACTIVITY_CHANNEL}, ${notifyPayload(id, activity.computerId)})
      from inserted`);
    const createdAt = rows[0]?.created_at;
    return {
      id,
      computerId: activity.computerId,
      botId: activity.botId,
      runId: activity.runId ?? null,
      type: COMMAND_EVENT,
      payload,
      createdAt: new Date(createdAt ?? Date.now()).toISOString(),
    };
  } catch (error) {
    ctx.log.warn("activity.record_failed", { computerId: activity.computerId, tool: activity.tool, error });
    return undefined;
  }
}

/** Notifications carry ids only (payloads are capped at 8000 bytes); feeds load the row. */
function notifyPayload(id: string, computerId: string): string {
  return JSON.stringify({ id, computerId });
}
