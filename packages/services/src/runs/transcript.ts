/**
 * A run's transcript: what the agent said and did, in order (`seq` 1, 2, … per run), stored in
 * `run_events` by the worker that hosts the run and announced with `pg_notify` in the same
 * statement, so every API replica's feed (./transcript-feed.ts) streams it live and a page
 * opened later reads the same rows.
 *
 * Everything is redacted here, before it is stored (packages/log redaction, as Activity does):
 * model text, tool arguments, tool results and errors. A transcript event is capped
 * (`TRANSCRIPT_TEXT_CHARS` per text field); a thumbnail is already small when it arrives
 * (`TRANSCRIPT_THUMBNAIL_BYTES` is refused above that).
 */
import { newId, runEvents } from "@rakazo/db";
import { redactText, redactValue } from "@rakazo/log";
import { and, asc, eq, gt, sql } from "drizzle-orm";
import type { Caller, ServiceContext } from "../context.ts";
import { requireRun } from "./runs.ts";

export const RUN_EVENT_CHANNEL = "rakazo_run_events";
/** The most text one transcript field keeps (the start: where a tool's answer says what happened). */
export const TRANSCRIPT_TEXT_CHARS = 4_000;
/** The largest observation thumbnail stored (bytes of PNG). */
export const TRANSCRIPT_THUMBNAIL_BYTES = 64 * 1024;
/** Events one `run/transcript` page answers. */
export const TRANSCRIPT_PAGE = 200;

export type RunEventType = "status" | "text" | "tool" | "error";

export interface RunEventInput {
  readonly runId: string;
  readonly computerId: string;
  readonly type: RunEventType;
  readonly payload: Record<string, unknown>;
  /** A small PNG of the frame a tool observed. */
  readonly thumbnail?: Uint8Array;
}

export interface RunEventView {
  readonly id: string;
  readonly runId: string;
  readonly seq: number;
  readonly type: string;
  readonly payload: Record<string, unknown>;
  /** The observation's thumbnail as a PNG data URL, or null. */
  readonly thumbnail: string | null;
  readonly createdAt: string;
}

/** Redacts every string in the payload and caps long strings. */
function cleanPayload(payload: Record<string, unknown>): Record<string, unknown> {
  const capped = (value: unknown): unknown => {
    if (typeof value === "string") {
      const text = redactText(value);
      return text.length > TRANSCRIPT_TEXT_CHARS ? `${text.slice(0, TRANSCRIPT_TEXT_CHARS)}…` : text;
    }
    if (Array.isArray(value)) return value.map(capped);
    if (value && typeof value === "object") {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, capped(v)]));
    }
    return value;
  };
  return capped(redactValue(payload)) as Record<string, unknown>;
}

/**
 * Stores and announces one transcript event. Never throws for the run's sake: a transcript that
 * cannot be written is logged, the run goes on.
 */
export async function appendRunEvent(
  ctx: Pick<ServiceContext, "db" | "log">,
  event: RunEventInput,
): Promise<RunEventView | undefined> {
  const id = newId("runEvent");
  const payload = cleanPayload(event.payload);
  const thumbnail =
    event.thumbnail && event.thumbnail.byteLength <= TRANSCRIPT_THUMBNAIL_BYTES ? event.thumbnail : null;
  const notify = JSON.stringify({ id, computerId: event.computerId });
  try {
    // One statement: numbering, insert and notification commit together. One worker hosts a
    // run, so appends of one run never race; the unique (run, seq) index would refuse one that did.
    const rows = await ctx.db.execute<{ seq: number; created_at: Date | string }>(sql`
      with inserted as (
        insert into ${runEvents} (id, run_id, computer_id, seq, type, payload, thumbnail)
        values (${id}, ${event.runId}, ${event.computerId},
                (select coalesce(max(seq), 0) + 1 from ${runEvents} where run_id = ${event.runId}),
                ${event.type}, ${JSON.stringify(payload)}::jsonb,
                ${thumbnail ? Buffer.from(thumbnail) : null})
        returning seq, created_at
      )
      select seq, created_at, pg_notify(${RUN_EVENT_CHANNEL}, ${notify}) from inserted`);
    const row = rows[0];
    return {
      id,
      runId: event.runId,
      seq: Number(row?.seq ?? 0),
      type: event.type,
      payload,
      thumbnail: thumbnail ? dataUrl(thumbnail) : null,
      createdAt: new Date(row?.created_at ?? Date.now()).toISOString(),
    };
  } catch (error) {
    ctx.log.warn("run.transcript_write_failed", { runId: event.runId, type: event.type, error });
    return undefined;
  }
}

function dataUrl(png: Uint8Array): string {
  return `data:image/png;base64,${Buffer.from(png).toString("base64")}`;
}

export function toRunEventView(row: typeof runEvents.$inferSelect): RunEventView {
  return {
    id: row.id,
    runId: row.runId,
    seq: row.seq,
    type: row.type,
    payload: row.payload,
    thumbnail: row.thumbnail ? dataUrl(row.thumbnail) : null,
    createdAt: row.createdAt.toISOString(),
  };
}

/** A page of the run's transcript after `afterSeq` (0: from the start); NOT_FOUND for a foreign run. */
export async function runTranscript(
  ctx: ServiceContext,
  caller: Caller,
  input: { runId: string; afterSeq?: number },
): Promise<{ events: RunEventView[]; more: boolean }> {
  const { run } = await requireRun(ctx, caller, input.runId);
  const rows = await ctx.db
    .select()
    .from(runEvents)
    .where(and(eq(runEvents.runId, run.id), gt(runEvents.seq, input.afterSeq ?? 0)))
    .orderBy(asc(runEvents.seq))
    .limit(TRANSCRIPT_PAGE + 1);
  return { events: rows.slice(0, TRANSCRIPT_PAGE).map(toRunEventView), more: rows.length > TRANSCRIPT_PAGE };
}
