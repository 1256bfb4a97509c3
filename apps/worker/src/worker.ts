import type { Database } from "@rakazo/db";
import type { AgentHomeStore, KeyWrapper } from "@rakazo/homes";
import { registerJobHandlers, startPgBoss } from "@rakazo/jobs";
import type { Logger } from "@rakazo/log";
import type { SandboxProvider } from "@rakazo/sandbox";
import {
  checkpointAfterRuns,
  computerJobHandlers,
  type IdlePolicy,
  reconcileHomeObjects,
  type ServiceContext,
  sweepIdleComputers,
} from "@rakazo/services";

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
  /** How often the reconciler deletes stored workspaces no computer owns (PER-5). */
  readonly reconcileIntervalMs?: number;
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
    runHooks: checkpointAfterRuns,
  };
  await registerJobHandlers(boss, computerJobHandlers(ctx), {
    pollingIntervalSeconds: options.pollingIntervalSeconds ?? 1,
  });
  const loops: (() => Promise<void>)[] = [];
  const idle = options.idle;
  if (idle) loops.push(every(idle.sweepIntervalMs, () => sweepIdleComputers(ctx, idle), log, "idle.sweep"));
  if (options.reconcileIntervalMs) {
    loops.push(
      every(options.reconcileIntervalMs, () => reconcileHomeObjects(ctx, {}), log, "homes.reconcile"),
    );
  }
  log.info("worker.started", { provider: options.provider.kind, homes: options.homes.kind });
  return {
    async stop({ timeoutMs = 30_000 } = {}) {
      for (const stopLoop of loops) await stopLoop();
      await boss.stop({ graceful: true, timeout: timeoutMs });
      log.info("worker.stopped");
    },
  };
}
