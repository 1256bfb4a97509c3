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
 * catalog exists — sending to a missing queue throws. Every queue notifies: a job sent by any
 * process (the API's create, a finished run's checkpoint) NOTIFYs in Postgres, and a process
 * started with `listen` (the worker) fetches at once instead of on its next poll, so no
 * lifecycle step waits out a poll interval.
 */
export async function startPgBoss(
  connectionString: string,
  options: {
    onError: (error: Error) => void;
    /** pg-boss's warnings: slow queries, backlogs, and LISTEN unavailable (polling only). */
    onWarning?: (warning: { message: string; data: object }) => void;
    supervise: boolean;
    listen?: boolean;
  },
): Promise<PgBossHandle> {
  const boss = new PgBoss({
    connectionString,
    supervise: options.supervise,
    schedule: options.supervise,
    application_name: "rakazo",
    useListenNotify: options.listen ?? false,
  });
  boss.on("error", options.onError);
  if (options.onWarning) {
    const onWarning = options.onWarning;
    boss.on("warning", (warning) => onWarning({ message: warning.message, data: warning.data }));
  }
  await boss.start();
  for (const name of JOB_NAMES) {
    const spec = JOB_CATALOG[name];
    const settings = {
      retryLimit: spec.retryLimit,
      retryDelay: spec.retryDelaySeconds,
      expireInSeconds: spec.expireInSeconds,
      notify: true,
    };
    await boss.createQueue(name, settings);
    // createQueue leaves an existing queue as it was: a deployment's queues made before
    // notify existed get it (and any changed retry settings) here.
    await boss.updateQueue(name, settings);
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

/**
 * What the worker does when a handler fails because the database went away (a restart, a
 * failover) rather than because the job went wrong: pg-boss cannot record that failure either,
 * so the job would sit `active` until its expiry (up to hours) and then run as a retry.
 * Instead the worker waits until the database answers again and runs the handler once more in
 * the same attempt — handlers are idempotent (conditional updates), so a second pass settles
 * whatever the first one wrote — until the job's own expiry aborts it.
 */
export interface DatabaseOutage {
  /**
   * Whether `error` may mean the database could not be reached (not that a query was wrong).
   * Connection codes are not the database's own — a provider socket or the S3 store refuses
   * with the same ECONNREFUSED — so `waitUntilReachable` decides.
   */
  isUnavailable(error: unknown): boolean;
  /**
   * Asks the database at once: `false` when it answers (the failure was something else's, and
   * the job fails as usual); else waits until it answers again and resolves `true`. Rejects
   * when `signal` aborts.
   */
  waitUntilReachable(signal: AbortSignal): Promise<boolean>;
  /** Told each time a handler is run again after an outage. */
  onResume?(job: { name: JobName; jobId: string; error: unknown }): void;
}

/** Registers one worker per catalog job. Payloads are validated before the handler runs. */
export async function registerJobHandlers(
  boss: PgBoss,
  handlers: JobHandlers,
  options: { pollingIntervalSeconds?: number; outage?: DatabaseOutage } = {},
): Promise<void> {
  const outage = options.outage;
  for (const name of JOB_NAMES) {
    const spec = JOB_CATALOG[name];
    const handler = handlers[name] as (payload: unknown, job: JobContext) => Promise<void>;
    // batchSize 1: a throw fails exactly one job (pg-boss fails whole batches). NOTIFY wakes an
    // idle worker, but pg-boss folds every wake-up that arrives before its next fetch into that
    // one fetch of one job: of jobs sent back to back only the first would start at once, the
    // rest a poll later. So after each job the worker fetches again at once (notifyWorker),
    // until the queue is empty; the poll (the same interval as without NOTIFY) is only the floor.
    let workerId: string | undefined;
    const interval = options.pollingIntervalSeconds ?? 1;
    workerId = await boss.work(
      name,
      { batchSize: 1, pollingIntervalSeconds: interval, notifyPollingIntervalSeconds: interval },
      async (jobs) => {
        try {
          for (const job of jobs) {
            const payload = spec.schema.parse(job.data);
            const retryCount = job.retryCount;
            const context = {
              jobId: job.id,
              retryCount,
              isLastAttempt: retryCount >= spec.retryLimit,
              signal: job.signal,
            };
            for (;;) {
              try {
                await handler(payload, context);
                break;
              } catch (error) {
                if (!outage?.isUnavailable(error) || job.signal.aborted) throw error;
                if (!(await outage.waitUntilReachable(job.signal))) throw error;
                outage.onResume?.({ name, jobId: job.id, error });
              }
            }
          }
        } finally {
          if (workerId) boss.notifyWorker(workerId);
        }
      },
    );
  }
}
