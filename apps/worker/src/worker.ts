import { type Database, isDatabaseUnavailable, newId, pingDatabase } from "@rakazo/db";
import { type DatabaseOutage, JOB_NAMES, registerJobHandlers } from "@rakazo/jobs";
import type { Logger } from "@rakazo/log";
import type { Runtime } from "@rakazo/runtime";
import {
  beatWorkerHeartbeat,
  computerJobHandlers,
  endLapsedRuns,
  type IdlePolicy,
  interruptSilentOperations,
  leaveWorkerPool,
  reconcileHomeObjects,
  republishAgentRuns,
  republishQueuedOperations,
  type ServiceContext,
  stopDeploymentComputers,
  sweepIdleComputers,
} from "@rakazo/services";
import { type AgentHostOptions, agentRunHandler } from "./agent-runs.ts";

export interface WorkerOptions {
  /** The process's context and pg-boss (`createRuntime({ role: "worker" })`); closed by `stop`. */
  readonly runtime: Runtime;
  readonly pollingIntervalSeconds?: number;
  /** Idle shutdown (CMP-7): how long unused before stopping, and how often to look. */
  readonly idle?: IdlePolicy & { readonly sweepIntervalMs: number };
  /** Hosts agent runs when a model is configured (`AGENT_MODEL`). */
  readonly agent?: AgentHostOptions;
  /** How often this worker records its heartbeat (OPS-5); default 30 s. */
  readonly heartbeatMs?: number;
  /** Called after each heartbeat is recorded (the compose healthcheck's file). */
  readonly onHeartbeat?: () => Promise<void>;
  /** How often the reconciler deletes stored workspaces no computer owns (PER-5). */
  readonly reconcileIntervalMs?: number;
  /** The operations reconciler (OPS-4): republishes missed enqueues, ends runs whose host is gone. */
  readonly reconciler?: ReconcilerOptions;
  /** How the last worker stops the deployment's computers when it stops (`stop({ computers: "stop" })`). */
  readonly shutdown?: ShutdownOptions;
}

export interface ShutdownOptions {
  /** Computers stopped at once (checkpoint and container work share the host's cores). */
  readonly concurrency: number;
  /** No computer is claimed later than this after the stop began; the rest stay running. */
  readonly claimWithinMs: number;
  /** Lifecycle jobs in flight (a provision) get this long to finish before computers are stopped. */
  readonly jobsWithinMs: number;
}

/**
 * Sized to the compose worker's 30 s `stop_grace_period` and the launcher's worker grace: a
 * clean stop of 1 or 3 Docker computers took 0.7–2.1 s here (docs/decisions.md, "The stack's
 * shutdown stops its computers"), so claims end at 15 s and what was claimed finishes well
 * inside the grace period.
 */
const DEFAULT_SHUTDOWN: ShutdownOptions = {
  concurrency: 3,
  claimWithinMs: 15_000,
  jobsWithinMs: 5_000,
};

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
  /**
   * Stops taking jobs and waits for the ones in flight (graceful), then closes pg-boss. With
   * `computers: "stop"` the last live worker first stops the deployment's running computers
   * (checkpoint, stop, machine released); `"keep"` leaves them running.
   */
  stop(options?: { timeoutMs?: number; computers?: "stop" | "keep" }): Promise<void>;
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

/**
 * A job cut off by a database outage runs again in the same attempt once the database answers
 * (packages/jobs `DatabaseOutage`): asked at once — a database that answers means the refusal
 * was another service's, and the job fails as it would have — then every 250 ms backing off to 2 s.
 */
export function databaseOutage(db: Database, log: Logger): DatabaseOutage {
  return {
    isUnavailable: isDatabaseUnavailable,
    async waitUntilReachable(signal) {
      for (let delayMs = 0; ; delayMs = Math.min(Math.max(delayMs * 2, 250), 2_000)) {
        if (delayMs > 0) await new Promise((done) => setTimeout(done, delayMs));
        signal.throwIfAborted();
        try {
          await pingDatabase(db);
          // Answering at once: the refusal came from elsewhere (a provider, the home store).
          return delayMs > 0;
        } catch (error) {
          if (!isDatabaseUnavailable(error)) throw error;
        }
      }
    },
    onResume: ({ name, jobId, error }) => log.warn("job.resumed_after_outage", { job: name, jobId, error }),
  };
}

/** Starts pg-boss with every job of the catalog handled by the shared domain verbs. */
export async function startWorker(options: WorkerOptions): Promise<RunningWorker> {
  const { runtime } = options;
  const workerId = newId("worker");
  // Operations this worker claims carry its id, so its silence can be noticed (OPS-5).
  const ctx: ServiceContext = { ...runtime.ctx, workerId };
  const { log } = ctx;
  // The heartbeat row exists before any job is claimed, so a fresh worker is never "silent".
  await beatWorkerHeartbeat(ctx, workerId);
  await options.onHeartbeat?.();
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
  await registerJobHandlers(runtime.boss, handlers, {
    pollingIntervalSeconds: options.pollingIntervalSeconds ?? 1,
    outage: databaseOutage(ctx.db, log),
  });
  const loops: (() => Promise<void>)[] = [
    every(
      options.heartbeatMs ?? 30_000,
      async () => {
        await beatWorkerHeartbeat(ctx, workerId);
        await options.onHeartbeat?.();
      },
      log,
      "worker.heartbeat",
    ),
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
          await republishAgentRuns(ctx, { graceMs: reconciler.queuedGraceMs });
          await interruptSilentOperations(ctx, { silenceMs: reconciler.workerSilenceMs });
          await endLapsedRuns(ctx, { graceMs: reconciler.runGraceMs });
        },
        log,
        "operations.reconcile",
      ),
    );
  }
  log.info("worker.started", { workerId, provider: ctx.provider.kind, homes: ctx.homes.kind });
  const shutdown = options.shutdown ?? DEFAULT_SHUTDOWN;
  const freshMs = 2 * (options.heartbeatMs ?? 30_000);

  /** No new jobs; lifecycle jobs in flight may finish (bounded), then the computers are stopped. */
  const stopComputers = async (began: number): Promise<void> => {
    const lifecycle = JOB_NAMES.filter((name) => name !== "agent.run");
    // An agent run is not waited for: its computer is checkpointed and stopped under it.
    await runtime.boss.offWork("agent.run", { wait: false });
    const settled = await Promise.race([
      Promise.all(lifecycle.map((name) => runtime.boss.offWork(name, { wait: true }))).then(() => true),
      new Promise<false>((done) => setTimeout(() => done(false), shutdown.jobsWithinMs)),
    ]);
    if (!settled) log.warn("worker.jobs_still_running", { waitedMs: shutdown.jobsWithinMs });
    const others = await leaveWorkerPool(ctx, workerId, { freshMs });
    if (others > 0) {
      log.info("worker.computers_left_to_other_workers", { liveWorkers: others });
      return;
    }
    await beatWorkerHeartbeat(ctx, workerId);
    const report = await stopDeploymentComputers(ctx, {
      concurrency: shutdown.concurrency,
      deadline: began + shutdown.claimWithinMs,
    });
    const line = {
      stopped: report.stopped.length,
      ms: Date.now() - began,
      ...(report.failed.length ? { failed: report.failed } : {}),
      ...(report.notReleased.length ? { notReleased: report.notReleased } : {}),
      ...(report.leftRunning.length ? { leftRunning: report.leftRunning } : {}),
    };
    if (report.failed.length || report.notReleased.length || report.leftRunning.length) {
      log.warn("worker.computers_not_all_stopped", line);
    } else {
      log.info("worker.computers_stopped", line);
    }
  };

  return {
    async stop({ timeoutMs = 30_000, computers = "keep" } = {}) {
      const began = Date.now();
      for (const stopLoop of loops) await stopLoop();
      if (computers === "stop") {
        await stopComputers(began).catch((error: unknown) =>
          log.error("worker.computers_stop_failed", { error }),
        );
      }
      // Gone from the pool now, so a worker started next does not count this one as live.
      await leaveWorkerPool(ctx, workerId, { freshMs }).catch(() => 0);
      await runtime.close({ graceful: true, timeoutMs });
      log.info("worker.stopped");
    },
  };
}
