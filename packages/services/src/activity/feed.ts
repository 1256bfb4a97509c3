/**
 * The live activity stream of one process. Every replica LISTENs on one Postgres connection
 * and fans events out to its subscribers through an in-process EventEmitter. There is one path
 * for every event, including this process's own: NOTIFY (sent on commit by ./record.ts) →
 * LISTEN → load the row → emit. So a subscriber sees exactly what history holds, in commit
 * order, whichever replica or worker ran the tool. Run transcripts (../runs/transcript-feed.ts)
 * travel the same way on a channel of their own.
 */
import { EventEmitter } from "node:events";
import { activityEvents, type Database } from "@rakazo/db";
import type { Logger } from "@rakazo/log";
import { eq } from "drizzle-orm";
import { toActivityEvent } from "./list.ts";
import { ACTIVITY_CHANNEL, type ActivityEvent } from "./record.ts";

/** A computer's live events of one kind, in commit order. */
export interface ComputerFeed<T> {
  /** Calls `listener` for each new event of the computer; returns the unsubscribe function. */
  subscribe(computerId: string, listener: (event: T) => void): () => void;
  close(): Promise<void>;
}

export type ActivityFeed = ComputerFeed<ActivityEvent>;

/** The part of a postgres.js client a feed needs (drizzle's `db.$client` is one). */
export interface ListenClient {
  listen(channel: string, onNotify: (payload: string) => void): Promise<{ unlisten(): Promise<void> }>;
}

export interface FeedOptions {
  db: Database;
  log: Logger;
  /** Defaults to the database's own postgres.js client (it opens a dedicated connection for LISTEN). */
  listener?: ListenClient;
}

/**
 * One LISTEN on `channel`, whose payloads are `{ id, computerId }` of a committed row: the row
 * is loaded (only while someone watches that computer) and emitted to its subscribers.
 */
export async function startComputerFeed<T>(
  options: FeedOptions & {
    channel: string;
    load(db: Database, id: string): Promise<T | undefined>;
    /** The log message of a delivery that failed. */
    failure: string;
  },
): Promise<ComputerFeed<T>> {
  const { db, log } = options;
  const client = options.listener ?? (db as unknown as { $client: ListenClient }).$client;
  const emitter = new EventEmitter();
  emitter.setMaxListeners(0);
  // Deliveries are chained so subscribers see events in notification (commit) order.
  let chain = Promise.resolve();
  const subscription = await client.listen(options.channel, (raw) => {
    chain = chain.then(() => deliver(raw));
  });

  async function deliver(raw: string): Promise<void> {
    try {
      const { id, computerId } = JSON.parse(raw) as { id: string; computerId: string };
      if (emitter.listenerCount(computerId) === 0) return;
      const event = await options.load(db, id);
      if (event !== undefined) emitter.emit(computerId, event);
    } catch (error) {
      log.warn(options.failure, { error });
    }
  }

  return {
    subscribe(computerId, listener) {
      emitter.on(computerId, listener);
      return () => emitter.off(computerId, listener);
    },
    async close() {
      emitter.removeAllListeners();
      await subscription.unlisten();
    },
  };
}

/** Starts this process's activity feed: one LISTEN connection. */
export function startActivityFeed(options: FeedOptions): Promise<ActivityFeed> {
  return startComputerFeed({
    ...options,
    channel: ACTIVITY_CHANNEL,
    failure: "activity.feed_delivery_failed",
    async load(db, id) {
      const [row] = await db.select().from(activityEvents).where(eq(activityEvents.id, id)).limit(1);
      return row ? toActivityEvent(row) : undefined;
    },
  });
}
