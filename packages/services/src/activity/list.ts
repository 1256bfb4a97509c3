import { activityEvents } from "@rakazo/db";
import { and, asc, eq, sql } from "drizzle-orm";
import { requireComputer } from "../computers/access.ts";
import type { Caller, ServiceContext } from "../context.ts";
import { AppError } from "../errors.ts";
import type { ActivityEvent } from "./record.ts";

export const DEFAULT_ACTIVITY_LIMIT = 100;
export const MAX_ACTIVITY_LIMIT = 500;

type ActivityRow = typeof activityEvents.$inferSelect;

export function toActivityEvent(row: ActivityRow): ActivityEvent {
  return {
    id: row.id,
    computerId: row.computerId,
    botId: row.botId,
    runId: row.runId,
    type: row.type,
    payload: row.payload,
    createdAt: row.createdAt.toISOString(),
  };
}

/**
 * A computer's activity history, oldest first. `after` is the last event id the caller has
 * seen (the cursor a live stream hands out too); an unknown cursor is refused, not ignored.
 */
export async function listActivity(
  ctx: ServiceContext,
  caller: Caller,
  input: { computerId: string; after?: string; limit?: number },
): Promise<{ events: ActivityEvent[]; next: string | null }> {
  const computer = await requireComputer(ctx, caller, input.computerId);
  const limit = Math.min(Math.max(input.limit ?? DEFAULT_ACTIVITY_LIMIT, 1), MAX_ACTIVITY_LIMIT);
  if (input.after !== undefined) {
    const [known] = await ctx.db
      .select({ id: activityEvents.id })
      .from(activityEvents)
      .where(and(eq(activityEvents.id, input.after), eq(activityEvents.computerId, computer.id)))
      .limit(1);
    if (!known) throw new AppError("INVALID_INPUT", "unknown activity cursor");
  }
  // The cursor is compared in SQL: timestamps have microseconds, JavaScript dates do not.
  const rows = await ctx.db
    .select()
    .from(activityEvents)
    .where(
      and(
        eq(activityEvents.computerId, computer.id),
        input.after !== undefined
          ? sql`(${activityEvents.createdAt}, ${activityEvents.id}) > (select created_at, id from ${activityEvents} where id = ${input.after})`
          : undefined,
      ),
    )
    .orderBy(asc(activityEvents.createdAt), asc(activityEvents.id))
    .limit(limit + 1);
  const events = rows.slice(0, limit).map(toActivityEvent);
  return { events, next: rows.length > limit ? (events.at(-1)?.id ?? null) : null };
}
