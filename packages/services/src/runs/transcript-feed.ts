/**
 * The live transcript of one process, beside the activity feed (../activity/feed.ts) and built
 * the same way: one LISTEN connection per replica, NOTIFY (sent on commit by ./transcript.ts) →
 * load the row → emit to the computer's subscribers. A subscriber sees what `run/transcript`
 * holds, in commit order, whichever worker hosts the run.
 */
import { EventEmitter } from "node:events";
import { type Database, runEvents } from "@rakazo/db";
import type { Logger } from "@rakazo/log";
import { eq } from "drizzle-orm";
import type { ListenClient } from "../activity/feed.ts";
import { RUN_EVENT_CHANNEL, type RunEventView, toRunEventView } from "./transcript.ts";

export interface RunEventFeed {
  /** Calls `listener` for each new transcript event of a run on the computer; returns the unsubscribe. */
  subscribe(computerId: string, listener: (event: RunEventView) => void): () => void;
  close(): Promise<void>;
}

export async function startRunEventFeed(options: {
  db: Database;
  log: Logger;
  listener?: ListenClient;
}): Promise<RunEventFeed> {
  const { db, log } = options;
  const client = options.listener ?? (db as unknown as { $client: ListenClient }).$client;
  const emitter = new EventEmitter();
  emitter.setMaxListeners(0);
  let chain = Promise.resolve();
  const subscription = await client.listen(RUN_EVENT_CHANNEL, (raw) => {
    chain = chain.then(() => deliver(raw));
  });

  async function deliver(raw: string): Promise<void> {
    try {
      const { id, computerId } = JSON.parse(raw) as { id: string; computerId: string };
      if (emitter.listenerCount(computerId) === 0) return;
      const [row] = await db.select().from(runEvents).where(eq(runEvents.id, id)).limit(1);
      if (row) emitter.emit(computerId, toRunEventView(row));
    } catch (error) {
      log.warn("run.transcript_feed_delivery_failed", { error });
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
