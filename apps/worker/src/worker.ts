import type { Database } from "@rakazo/db";
import { registerJobHandlers, startPgBoss } from "@rakazo/jobs";
import type { Logger } from "@rakazo/log";
import type { SandboxProvider } from "@rakazo/sandbox";
import { computerJobHandlers, type IdlePolicy, sweepIdleComputers } from "@rakazo/services";

export interface WorkerOptions {
  readonly databaseUrl: string;
  readonly db: Database;
  readonly provider: SandboxProvider;
  readonly log: Logger;
  readonly pollingIntervalSeconds?: number;
  /** Idle shutdown (CMP-7): how long unused before stopping, and how often to look. */
  readonly idle?: IdlePolicy & { readonly sweepIntervalMs: number };
}

export interface RunningWorker {
  /** Stops taking jobs and waits for the ones in flight (graceful), then closes pg-boss. */
  stop(options?: { timeoutMs?: number }): Promise<void>;
}

/** Starts pg-boss with every job of the catalog handled by the shared domain verbs. */
export async function startWorker(options: WorkerOptions): Promise<RunningWorker> {
  const { log } = options;
  const { boss, queue } = await startPgBoss(options.databaseUrl, {
    supervise: true,
    onError: (error) => log.error("pgboss.error", { error }),
  });
  const ctx = { db: options.db, jobs: queue, provider: options.provider, log };
  await registerJobHandlers(boss, computerJobHandlers(ctx), {
    pollingIntervalSeconds: options.pollingIntervalSeconds ?? 1,
  });
  // Every replica sweeps; the conditional claim in sweepIdleComputers lets exactly one win.
  let sweeping: Promise<unknown> = Promise.resolve();
  const idle = options.idle;
  const sweeper = idle
    ? setInterval(() => {
        sweeping = sweepIdleComputers(ctx, idle).catch((error: unknown) =>
          log.error("idle.sweep_failed", { error }),
        );
      }, idle.sweepIntervalMs)
    : undefined;
  log.info("worker.started", { provider: options.provider.kind });
  return {
    async stop({ timeoutMs = 30_000 } = {}) {
      clearInterval(sweeper);
      await sweeping;
      await boss.stop({ graceful: true, timeout: timeoutMs });
      log.info("worker.stopped");
    },
  };
}
