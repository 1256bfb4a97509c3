/**
 * The live activity stream of one process. Every replica LISTENs on one Postgres connection
 * and fans events out to its subscribers through an in-process EventEmitter. There is one path
 * for every event, including this process's own: NOTIFY (sent on commit by ./record.ts) →
 * LISTEN → load the row → emit. So a subscriber sees exactly what history holds, in commit
 * order, whichever replica or worker ran the tool.
 */
import { EventEmitter } from "node:events";
import { activityEvents, type Database } from "@rakazo/db";
import type { Logger } from "@rakazo/log";
import { eq } from "drizzle-orm";
import { toActivityEvent } from "./list.ts";
import { ACTIVITY_CHANNEL, type ActivityEvent } from "./record.ts";

export interface ActivityFeed {
  /** Calls `listener` for each new event of the computer; returns the unsubscribe function. */
  subscribe(computerId: string, listener: (event: ActivityEvent) => void): () => void;
  close(): Promise<void>;
}

/** The part of a postgres.js client a feed needs (drizzle's `db.$client` is one). */
export interface ListenClient {
  listen(channel: string, onNotify: (payload: string) => void): Promise<{ unlisten(): Promise<void> }>;
}

/**
 * Starts this process's feed: one LISTEN connection. `listener` defaults to the database's own
 * postgres.js client (it opens a dedicated connection for LISTEN).
 */
export async function startActivityFeed(options: {
  db: Database;
  log: Logger;
  listener?: ListenClient;
}): Promise<ActivityFeed> {
  const { db, log } = options;
  const client = options.listener ?? (db as unknown as { $client: ListenClient }).$client;
  const emitter = new EventEmitter();
  emitter.setMaxListeners(0);
  // Deliveries are chained so subscribers see events in notification (commit) order.
  let chain = Promise.resolve();
  const subscription = await client.listen(ACTIVITY_CHANNEL, (raw) => {
    chain = chain.then(() => deliver(raw));
  });

  async function deliver(raw: string): Promise<void> {
    try {
      const { id, computerId } = JSON.parse(raw) as { id: string; computerId: string };
      if (emitter.listenerCount(computerId) === 0) return;
      const [row] = await db.select().from(activityEvents).where(eq(activityEvents.id, id)).limit(1);
      if (row) emitter.emit(computerId, toActivityEvent(row));
    } catch (error) {
      log.warn("activity.feed_delivery_failed", { error });
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
