/**
 * `GET /activity/stream?computerId=…`: the computer's `computer.command` events, live, as
 * server-sent events (TOOL-4). History is `computer/activity`; a client reconnecting passes
 * the last id it saw there. Authorization is the same bearer token and membership check as RPCs.
 *
 * With a run event feed, the same stream also carries the transcripts of the computer's runs as
 * `run.event` events (history is `run/transcript`). A slow reader holds at most
 * `MAX_QUEUED_RUN_EVENTS` of them (thumbnails make them the large ones); older ones are dropped,
 * and the reader sees the gap in `seq` and reads the transcript again.
 */
import {
  type ActivityFeed,
  AppError,
  authenticateToken,
  type RunEventFeed,
  requireComputer,
  type ServiceContext,
} from "@rakazo/services";
import type { Hono } from "hono";
import { streamSSE } from "hono/streaming";

const KEEPALIVE_MS = 15_000;
/** How often an open stream checks its token and membership again: a removed member's ends within a second. */
const ACCESS_RECHECK_MS = 1_000;
const MAX_QUEUED_RUN_EVENTS = 64;

interface QueuedEvent {
  readonly event: string;
  readonly data: string;
}

/**
 * Queues a run event for a reader; beyond `max` queued run events the oldest one is dropped
 * (command events are never dropped), so a reader that does not read holds a bounded queue.
 */
export function enqueueRunEvent(queue: QueuedEvent[], data: string, max = MAX_QUEUED_RUN_EVENTS): void {
  let queued = 0;
  let oldest = -1;
  for (let i = 0; i < queue.length; i += 1) {
    if (queue[i]?.event !== "run.event") continue;
    queued += 1;
    if (oldest < 0) oldest = i;
  }
  if (queued >= max && oldest >= 0) queue.splice(oldest, 1);
  queue.push({ event: "run.event", data });
}

export function mountActivityStream(
  app: Hono,
  ctx: ServiceContext,
  feed: ActivityFeed,
  runFeed?: RunEventFeed,
): void {
  app.get("/activity/stream", async (c) => {
    const header = c.req.header("authorization") ?? "";
    const secret = /^Bearer\s+(\S+)$/i.exec(header)?.[1];
    const caller = await authenticateToken(ctx, secret);
    const computerId = c.req.query("computerId") ?? "";
    if (!/^cmp_[a-z0-9]{20}$/.test(computerId)) throw new AppError("INVALID_INPUT", "computerId is required");
    await requireComputer(ctx, caller, computerId);
    return streamSSE(c, async (stream) => {
      const queue: QueuedEvent[] = [];
      let wake: (() => void) | undefined;
      const unsubscribeCommands = feed.subscribe(computerId, (event) => {
        queue.push({ event: "computer.command", data: JSON.stringify(event) });
        wake?.();
      });
      const unsubscribeRuns = runFeed?.subscribe(computerId, (event) => {
        enqueueRunEvent(queue, JSON.stringify(event));
        wake?.();
      });
      const unsubscribe = () => {
        unsubscribeCommands();
        unsubscribeRuns?.();
      };
      stream.onAbort(() => {
        unsubscribe();
        wake?.();
      });
      // The token revoked or the person removed from the space: the stream ends.
      const recheck = setInterval(() => {
        authenticateToken(ctx, secret)
          .then((again) => requireComputer(ctx, again, computerId))
          .catch(() => {
            stream.abort();
            wake?.();
          });
      }, ACCESS_RECHECK_MS);
      await stream.writeSSE({ event: "ready", data: "{}" });
      while (!stream.aborted) {
        const next = queue.shift();
        if (next !== undefined) {
          await stream.writeSSE(next);
          continue;
        }
        await new Promise<void>((done) => {
          wake = done;
          setTimeout(done, KEEPALIVE_MS);
        });
        wake = undefined;
        if (queue.length === 0 && !stream.aborted) await stream.writeSSE({ event: "ping", data: "{}" });
      }
      clearInterval(recheck);
      unsubscribe();
    });
  });
}
