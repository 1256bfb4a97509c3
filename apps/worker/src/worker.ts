import { type Database, newId } from "@rakazo/db";
import type { AgentHomeStore, KeyWrapper } from "@rakazo/homes";
import { registerJobHandlers, startPgBoss } from "@rakazo/jobs";
import type { Logger } from "@rakazo/log";
import type { SandboxProvider } from "@rakazo/sandbox";
import {
  beatWorkerHeartbeat,
  computerJobHandlers,
  endLapsedRuns,
  type IdlePolicy,
  interruptSilentOperations,
  reconcileHomeObjects,
  republishQueuedOperations,
  type ServiceContext,
  sweepIdleComputers,
  systemRunHooks,
} from "@rakazo/services";
import { type AgentHostOptions, agentRunHandler } from "./agent-runs.ts";

export interface WorkerOptions {
  readonly databaseUrl: string;
  readonly db: Database;
  readonly provider: SandboxProvider;
  readonly homes: AgentHomeStore;
  readonly keys: KeyWrapper;
  readonly log: Logger;
  readonly pollingIntervalSeconds?: number;
  /** Idle shutdown (CMP-7): how long unused before stopping, and how often to look. */
  readonly idle?: IdlePolicy & { readonly sweepIntervalMs: number };
  /** Hosts agent runs when a model is configured (`AGENT_MODEL`). */
  readonly agent?: AgentHostOptions;
  /** How often this worker records its heartbeat (OPS-5); default 30 s. */
  readonly heartbeatMs?: number;
  /** How often the reconciler deletes stored workspaces no computer owns (PER-5). */
  readonly reconcileIntervalMs?: number;
  /** The operations reconciler (OPS-4): republishes missed enqueues, ends runs whose host is gone. */
  readonly reconciler?: ReconcilerOptions;
}

export interface ReconcilerOptions {
  readonly intervalMs: number;
  /** A queued operation older than this without a job is republished. */
  readonly queuedGraceMs: number;
  /** A running run whose lease lapsed this long ago ends failed. */
  readonly runGraceMs: number;
  /** An operation whose worker has been silent this long becomes interrupted (OPS-5, 10 min). */
  readonly workerSilenceMs: number;
}

export interface RunningWorker {
  /** Stops taking jobs and waits for the ones in flight (graceful), then closes pg-boss. */
  stop(options?: { timeoutMs?: number }): Promise<void>;
}

/**
 * A background loop every replica runs. Each pass is safe to run on several replicas at once
 * (claims are conditional updates); passes never overlap within one process.
 */
function every(ms: number, pass: () => Promise<unknown>, log: Logger, name: string) {
  let running: Promise<unknown> = Promise.resolve();
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    running = pass()
      .catch((error: unknown) => log.error(`${name}.failed`, { error }))
      .finally(() => {
        busy = false;
      });
  }, ms);
  return async () => {
    clearInterval(timer);
    await running;
  };
}

/** Starts pg-boss with every job of the catalog handled by the shared domain verbs. */
export async function startWorker(options: WorkerOptions): Promise<RunningWorker> {
  const { log } = options;
  const workerId = newId("worker");
  // The heartbeat row exists before any job is claimed, so a fresh worker is never "silent".
  await beatWorkerHeartbeat(options, workerId);
  const { boss, queue } = await startPgBoss(options.databaseUrl, {
    supervise: true,
    onError: (error) => log.error("pgboss.error", { error }),
  });
  const ctx: ServiceContext = {
    db: options.db,
    jobs: queue,
    provider: options.provider,
    homes: options.homes,
    keys: options.keys,
    log,
    workerId,
    runHooks: systemRunHooks,
    ...(options.agent ? { agentModel: options.agent.model } : {}),
  };
  const agent = options.agent;
  const handlers = {
    ...computerJobHandlers(ctx),
    "agent.run": agent
      ? agentRunHandler(ctx, agent)
      : async (payload: { runId: string }) => {
          log.error("agent.not_configured", { runId: payload.runId });
          throw new Error("this worker has no AGENT_MODEL configured");
        },
  };
  await registerJobHandlers(boss, handlers, {
    pollingIntervalSeconds: options.pollingIntervalSeconds ?? 1,
  });
  const loops: (() => Promise<void>)[] = [
    every(options.heartbeatMs ?? 30_000, () => beatWorkerHeartbeat(ctx, workerId), log, "worker.heartbeat"),
  ];
  const idle = options.idle;
  if (idle) loops.push(every(idle.sweepIntervalMs, () => sweepIdleComputers(ctx, idle), log, "idle.sweep"));
  if (options.reconcileIntervalMs) {
    loops.push(
      every(options.reconcileIntervalMs, () => reconcileHomeObjects(ctx, {}), log, "homes.reconcile"),
    );
  }
  const reconciler = options.reconciler;
  if (reconciler) {
    loops.push(
      every(
        reconciler.intervalMs,
        async () => {
          await republishQueuedOperations(ctx, reconciler);
          await interruptSilentOperations(ctx, { silenceMs: reconciler.workerSilenceMs });
          await endLapsedRuns(ctx, { graceMs: reconciler.runGraceMs });
        },
        log,
        "operations.reconcile",
      ),
    );
  }
  log.info("worker.started", { workerId, provider: options.provider.kind, homes: options.homes.kind });
  return {
    async stop({ timeoutMs = 30_000 } = {}) {
      for (const stopLoop of loops) await stopLoop();
      await boss.stop({ graceful: true, timeout: timeoutMs });
      log.info("worker.stopped");
    },
  };
}
