/**
 * `GET /activity/stream?computerId=…`: the computer's `computer.command` events, live, as
 * server-sent events (TOOL-4). History is `computer/activity`; a client reconnecting passes
 * the last id it saw there. Authorization is the same bearer token and membership check as RPCs.
 */
import {
  type ActivityFeed,
  AppError,
  authenticateToken,
  requireComputer,
  type ServiceContext,
} from "@rakazo/services";
import type { Hono } from "hono";
import { streamSSE } from "hono/streaming";

const KEEPALIVE_MS = 15_000;

export function mountActivityStream(app: Hono, ctx: ServiceContext, feed: ActivityFeed): void {
  app.get("/activity/stream", async (c) => {
    const header = c.req.header("authorization") ?? "";
    const caller = await authenticateToken(ctx, /^Bearer\s+(\S+)$/i.exec(header)?.[1]);
    const computerId = c.req.query("computerId") ?? "";
    if (!/^cmp_[a-z0-9]{20}$/.test(computerId)) throw new AppError("INVALID_INPUT", "computerId is required");
    await requireComputer(ctx, caller, computerId);
    return streamSSE(c, async (stream) => {
      const queue: string[] = [];
      let wake: (() => void) | undefined;
      const unsubscribe = feed.subscribe(computerId, (event) => {
        queue.push(JSON.stringify(event));
        wake?.();
      });
      stream.onAbort(() => {
        unsubscribe();
        wake?.();
      });
      await stream.writeSSE({ event: "ready", data: "{}" });
      while (!stream.aborted) {
        const next = queue.shift();
        if (next !== undefined) {
          await stream.writeSSE({ event: "computer.command", data: next });
          continue;
        }
        await new Promise<void>((done) => {
          wake = done;
          setTimeout(done, KEEPALIVE_MS);
        });
        wake = undefined;
        if (queue.length === 0 && !stream.aborted) await stream.writeSSE({ event: "ping", data: "{}" });
      }
      unsubscribe();
    });
  });
}
