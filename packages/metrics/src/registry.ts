/**
 * One Prometheus registry per process (never prom-client's global one, so several apps in one
 * test process do not collide). Counters and histograms are observed where things happen; the
 * gauges of durable state (computers by state, job queues) are read from Postgres on scrape
 * with one GROUP BY each, never per request.
 */
import type { Database } from "@rakazo/db";
import { sql } from "drizzle-orm";
import { Counter, Gauge, Histogram, Registry } from "prom-client";

export interface CheckpointObservation {
  /** `saved`, `unchanged` or `skipped`. */
  readonly status: string;
  readonly bytes: number;
  readonly seconds: number;
}

export interface Metrics {
  readonly registry: Registry;
  /**
   * One finished RPC. `rpc` must be a name the process serves (the caller maps anything else to
   * `unknown`): a label per path a stranger invents would grow the registry without bound.
   */
  observeRpc(rpc: string, code: string, seconds: number): void;
  observeCheckpoint(observation: CheckpointObservation): void;
}

/** RPCs take a few milliseconds to a few minutes (a computer's first create pulls its image). */
const RPC_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120];
const CHECKPOINT_SECONDS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
const MiB = 1024 * 1024;
const CHECKPOINT_BYTES = [0.01, 0.1, 1, 10, 50, 100, 250, 500, 1024, 4096].map((m) => m * MiB);

/**
 * pg-boss keeps waiting jobs as `created` (never tried) and `retry` (failed, to be tried again).
 * A database without the pg-boss schema yet (a process before its first start) has no queue.
 */
async function queueRows(db: Database): Promise<{ name: string; waiting: number; oldest: number }[]> {
  const present = await db.execute<{ present: boolean }>(
    sql`select to_regclass('pgboss.job') is not null as present`,
  );
  if (!present[0]?.present) return [];
  const rows = await db.execute<{ name: string; waiting: string; oldest: string | null }>(sql`
    select name, count(*) as waiting, extract(epoch from now() - min(created_on)) as oldest
    from pgboss.job where state in ('created', 'retry') group by name`);
  return rows.map((r) => ({ name: r.name, waiting: Number(r.waiting), oldest: Number(r.oldest ?? 0) }));
}

export function createMetrics(options: { db: Database; service: "api" | "worker" }): Metrics {
  const { db } = options;
  const registry = new Registry();
  registry.setDefaultLabels({ service: options.service });

  // The count is a counter of its own besides the histogram's `_count`: a counter per label set
  // is what every scraper and parser reads, while histogram series come in buckets.
  const rpcCalls = new Counter({
    name: "rakazo_rpc_requests_total",
    help: "RPCs answered, by RPC name and result code (OK or the error code)",
    labelNames: ["rpc", "code"] as const,
    registers: [registry],
  });
  const rpcSeconds = new Histogram({
    name: "rakazo_rpc_duration_seconds",
    help: "Time to answer an RPC, by RPC name and result code",
    labelNames: ["rpc", "code"] as const,
    buckets: RPC_BUCKETS,
    registers: [registry],
  });
  const checkpointSeconds = new Histogram({
    name: "rakazo_checkpoint_duration_seconds",
    help: "Workspace checkpoints finished by this process, by status",
    labelNames: ["status"] as const,
    buckets: CHECKPOINT_SECONDS,
    registers: [registry],
  });
  const checkpointBytes = new Histogram({
    name: "rakazo_checkpoint_bytes",
    help: "Size of the workspace each finished checkpoint stored, by status",
    labelNames: ["status"] as const,
    buckets: CHECKPOINT_BYTES,
    registers: [registry],
  });

  new Gauge({
    name: "rakazo_computers",
    help: "Computers of this deployment by state (deleted ones are not counted)",
    labelNames: ["state"] as const,
    registers: [registry],
    async collect() {
      const rows = await db.execute<{ state: string; n: string }>(
        sql`select state, count(*) as n from computers where state <> 'deleted' group by state`,
      );
      this.reset();
      for (const row of rows) this.set({ state: row.state }, Number(row.n));
    },
  });
  // One query feeds both queue gauges: the depth's collect reads it, the age's reuses it.
  let queues: Promise<{ name: string; waiting: number; oldest: number }[]> | undefined;
  new Gauge({
    name: "rakazo_job_queue_depth",
    help: "Jobs waiting in each pg-boss queue (created or retry)",
    labelNames: ["queue"] as const,
    registers: [registry],
    async collect() {
      queues = queueRows(db);
      this.reset();
      for (const q of await queues) this.set({ queue: q.name }, q.waiting);
    },
  });
  new Gauge({
    name: "rakazo_job_queue_oldest_seconds",
    help: "Age of the oldest job waiting in each pg-boss queue",
    labelNames: ["queue"] as const,
    registers: [registry],
    async collect() {
      const rows = await (queues ?? queueRows(db));
      this.reset();
      for (const q of rows) this.set({ queue: q.name }, q.oldest);
    },
  });

  return {
    registry,
    observeRpc: (rpc, code, seconds) => {
      const labels = { rpc, code };
      rpcCalls.inc(labels);
      rpcSeconds.observe(labels, seconds);
    },
    observeCheckpoint: ({ status, bytes, seconds }) => {
      checkpointSeconds.observe({ status }, seconds);
      checkpointBytes.observe({ status }, bytes);
    },
  };
}
