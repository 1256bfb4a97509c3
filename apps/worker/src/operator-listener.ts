/**
 * The worker's own small HTTP listener (`WORKER_METRICS_PORT`): `/metrics`, `/ready` and
 * `/health`, nothing else. The worker serves no RPCs; this is for the operator's scraper and
 * probes. Checkpoints finish in this process, so their durations and sizes are observed here,
 * from the `computer.home_checkpoint` line the checkpoint writes when it completes.
 */
import { serve } from "@hono/node-server";
import type { Database } from "@rakazo/db";
import { type Logger, onLogLine } from "@rakazo/log";
import { createMetrics, mountOperatorRoutes } from "@rakazo/metrics";
import { Hono } from "hono";

export interface OperatorListenerOptions {
  readonly db: Database;
  readonly log: Logger;
  readonly host: string;
  readonly port: number;
  readonly token?: string | undefined;
}

const CHECKPOINT_EVENT = '"msg":"computer.home_checkpoint"';

export async function startOperatorListener(
  options: OperatorListenerOptions,
): Promise<{ close(): Promise<void> }> {
  const metrics = createMetrics({ db: options.db, service: "worker" });
  const stopObserving = onLogLine((line) => {
    if (!line.includes(CHECKPOINT_EVENT)) return;
    const entry = JSON.parse(line) as { status?: unknown; bytes?: unknown; ms?: unknown };
    if (typeof entry.status !== "string" || typeof entry.bytes !== "number" || typeof entry.ms !== "number")
      return;
    metrics.observeCheckpoint({ status: entry.status, bytes: entry.bytes, seconds: entry.ms / 1000 });
  });
  const app = new Hono();
  app.get("/health", (c) => c.json({ status: "ok" }));
  mountOperatorRoutes(app, { db: options.db, metrics, token: options.token });
  app.notFound((c) => c.json({ error: { code: "NOT_FOUND", message: "no such route" } }, 404));
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const listening = serve({ fetch: app.fetch, hostname: options.host, port: options.port }, (info) => {
      options.log.info("worker.metrics_listening", { host: options.host, port: info.port });
      resolve(listening);
    });
  });
  return {
    close: async () => {
      stopObserving();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
}
