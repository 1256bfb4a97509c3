import { PgBoss } from "pg-boss";
import { JOB_CATALOG, JOB_NAMES, type JobName, type JobPayload } from "./catalog.ts";

/** What the domain needs from the queue: durable, typed enqueueing. */
export interface JobQueue {
  /**
   * With `id`, sending is idempotent: a job with that id that already exists is left alone and
   * its id returned (the reconciler republishes this way, OPS-4).
   */
  send<N extends JobName>(name: N, payload: JobPayload<N>, options?: { id?: string }): Promise<string>;
}

export interface JobContext {
  readonly jobId: string;
  /** How many times this job was retried before (0 on the first attempt). */
  readonly retryCount: number;
  readonly isLastAttempt: boolean;
  readonly signal: AbortSignal;
}

export type JobHandlers = { [N in JobName]: (payload: JobPayload<N>, job: JobContext) => Promise<void> };

export interface PgBossHandle {
  readonly boss: PgBoss;
  readonly queue: JobQueue;
}

/**
 * Starts pg-boss (its schema is created or migrated here) and makes sure every queue of the
 * catalog exists — sending to a missing queue throws.
 */
export async function startPgBoss(
  connectionString: string,
  options: { onError: (error: Error) => void; supervise: boolean },
): Promise<PgBossHandle> {
  const boss = new PgBoss({
    connectionString,
    supervise: options.supervise,
    schedule: options.supervise,
    application_name: "rakazo",
  });
  boss.on("error", options.onError);
  await boss.start();
  for (const name of JOB_NAMES) {
    const spec = JOB_CATALOG[name];
    await boss.createQueue(name, {
      retryLimit: spec.retryLimit,
      retryDelay: spec.retryDelaySeconds,
      expireInSeconds: spec.expireInSeconds,
    });
  }
  const queue: JobQueue = {
    async send(name, payload, options = {}) {
      const data = JOB_CATALOG[name].schema.parse(payload);
      const id = await boss.send(name, data, options.id ? { id: options.id } : {});
      if (!id && options.id) return options.id;
      if (!id) throw new Error(`pg-boss refused job ${name}`);
      return id;
    },
  };
  return { boss, queue };
}

/** Registers one worker per catalog job. Payloads are validated before the handler runs. */
export async function registerJobHandlers(
  boss: PgBoss,
  handlers: JobHandlers,
  options: { pollingIntervalSeconds?: number } = {},
): Promise<void> {
  for (const name of JOB_NAMES) {
    const spec = JOB_CATALOG[name];
    const handler = handlers[name] as (payload: unknown, job: JobContext) => Promise<void>;
    // batchSize 1: a throw fails exactly one job (pg-boss fails whole batches).
    await boss.work(
      name,
      { batchSize: 1, pollingIntervalSeconds: options.pollingIntervalSeconds ?? 1 },
      async (jobs) => {
        for (const job of jobs) {
          const payload = spec.schema.parse(job.data);
          const retryCount = job.retryCount;
          await handler(payload, {
            jobId: job.id,
            retryCount,
            isLastAttempt: retryCount >= spec.retryLimit,
            signal: job.signal,
          });
        }
      },
    );
  }
}
