/**
 * The live transcript of one process, beside the activity feed (../activity/feed.ts) and built
 * on the same `startComputerFeed`: one LISTEN connection per replica, NOTIFY (sent on commit by
 * ./transcript.ts) → load the row → emit to the computer's subscribers. A subscriber sees what
 * `run/transcript` holds, in commit order, whichever worker hosts the run.
 */
import { runEvents } from "@rakazo/db";
import { eq } from "drizzle-orm";
import { type ComputerFeed, type FeedOptions, startComputerFeed } from "../activity/feed.ts";
import { RUN_EVENT_CHANNEL, type RunEventView, toRunEventView } from "./transcript.ts";

export type RunEventFeed = ComputerFeed<RunEventView>;

export function startRunEventFeed(options: FeedOptions): Promise<RunEventFeed> {
  return startComputerFeed({
    ...options,
    channel: RUN_EVENT_CHANNEL,
    failure: "run.transcript_feed_delivery_failed",
    async load(db, id) {
      const [row] = await db.select().from(runEvents).where(eq(runEvents.id, id)).limit(1);
      return row ? toRunEventView(row) : undefined;
    },
  });
}
