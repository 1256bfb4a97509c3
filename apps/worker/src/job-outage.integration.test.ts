/**
 * A job cut off by a database outage is not left to its expiry: the worker waits until the
 * database answers and runs the handler again in the same attempt, so the job completes once
 * (retry count 0). Any other failure is pg-boss's ordinary retry. The Postgres-restart drill
 * (tests/ops/drill-postgres-restart.test.ts) shows the same on a real restart.
 */
import { connectDatabase, type DatabaseHandle, isDatabaseUnavailable } from "@rakazo/db";
import { createTestDatabase, type TestDatabase } from "@rakazo/db/testing";
import {
  type DatabaseOutage,
  JOB_NAMES,
  type JobContext,
  type JobHandlers,
  type PgBossHandle,
  registerJobHandlers,
  startPgBoss,
} from "@rakazo/jobs";
import { createLogger } from "@rakazo/log";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseOutage } from "./worker.ts";

describe("a job interrupted by a database outage", () => {
  let database: TestDatabase;
  let worker: PgBossHandle;
  let handle: DatabaseHandle;
  const calls: { operationId: string; job: JobContext }[] = [];
  const resumed: string[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    worker = await startPgBoss(database.url, { onError: () => {}, supervise: true, listen: true });
    const noop = async () => {};
    const handlers = Object.fromEntries(JOB_NAMES.map((name) => [name, noop])) as unknown as JobHandlers;
    handlers["computer.checkpoint"] = async (payload, job) => {
      calls.push({ operationId: payload.operationId, job });
      const first = calls.filter((c) => c.operationId === payload.operationId).length === 1;
      if (first && payload.operationId === "op_outage") {
        // What postgres.js throws when the server refuses connections mid-restart.
        throw Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });
      }
      if (first && payload.operationId === "op_bug") throw new Error("a query was wrong");
      if (first && payload.operationId === "op_elsewhere") {
        // The S3 store or a provider socket refusing: the same code, while the database answers.
        throw Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:9000"), { code: "ECONNREFUSED" });
      }
    };
    handle = connectDatabase(database.url, { max: 2 });
    const real = databaseOutage(handle.db, createLogger({ level: "error", write: () => {} }));
    const outage: DatabaseOutage = {
      isUnavailable: isDatabaseUnavailable,
      // The database "was down" for 100 ms — except for the refusal that came from elsewhere,
      // which the worker's own check (databaseOutage, below) tells apart by asking at once.
      waitUntilReachable: async (signal) =>
        calls.at(-1)?.operationId === "op_elsewhere"
          ? real.waitUntilReachable(signal)
          : new Promise<boolean>((done) => setTimeout(() => done(true), 100)),
      onResume: ({ jobId }) => resumed.push(jobId),
    };
    await registerJobHandlers(worker.boss, handlers, { pollingIntervalSeconds: 1, outage });
  }, 60_000);

  afterAll(async () => {
    await worker?.boss.stop({ graceful: false });
    await handle?.close();
    await database?.drop();
  });

  async function settled(jobId: string, state: string) {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const job = await worker.boss.getJobById("computer.checkpoint", jobId);
      if (job?.state === state) return job;
      if (Date.now() > deadline) throw new Error(`job ${jobId} is ${job?.state}, never ${state}`);
      await new Promise((done) => setTimeout(done, 50));
    }
  }

  it("runs again in the same attempt once the database answers, and completes once", async () => {
    const jobId = await worker.queue.send("computer.checkpoint", {
      computerId: "cmp_o",
      operationId: "op_outage",
    });
    const job = await settled(jobId, "completed");
    expect(job.retryCount).toBe(0);
    const runs = calls.filter((c) => c.operationId === "op_outage");
    expect(runs.map((r) => [r.job.jobId, r.job.retryCount])).toEqual([
      [jobId, 0],
      [jobId, 0],
    ]);
    expect(resumed).toEqual([jobId]);
  }, 20_000);

  it("leaves any other failure to pg-boss's retry", async () => {
    const jobId = await worker.queue.send("computer.checkpoint", {
      computerId: "cmp_b",
      operationId: "op_bug",
    });
    await settled(jobId, "retry");
    // Failed once and handed back for pg-boss's delayed retry, not run again in the attempt.
    expect(calls.filter((c) => c.operationId === "op_bug")).toHaveLength(1);
    expect(resumed).not.toContain(jobId);
  }, 20_000);

  it("fails as usual when the refusal came from another service and the database answers", async () => {
    const jobId = await worker.queue.send("computer.checkpoint", {
      computerId: "cmp_e",
      operationId: "op_elsewhere",
    });
    await settled(jobId, "retry");
    expect(calls.filter((c) => c.operationId === "op_elsewhere")).toHaveLength(1);
    expect(resumed).not.toContain(jobId);
  }, 20_000);
});
