/**
 * Jobs are picked up on NOTIFY, not on the worker's next poll: a job sent by another process
 * (the API's pg-boss, which does not listen) reaches a listening worker whose polling interval
 * is far longer than the wait here. With the queues' `notify` off (or the worker not
 * listening) the job sits until the next poll and this test times out.
 */
import { createTestDatabase, type TestDatabase } from "@rakazo/db/testing";
import {
  JOB_NAMES,
  type JobHandlers,
  type PgBossHandle,
  registerJobHandlers,
  startPgBoss,
} from "@rakazo/jobs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/** Far longer than the test waits: only a NOTIFY can wake the worker in time. */
const POLL_SECONDS = 60;

describe("job pickup", () => {
  let database: TestDatabase;
  let api: PgBossHandle;
  let worker: PgBossHandle;
  const picked: { jobId: string; at: number }[] = [];
  const failures: Error[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    const onError = (error: Error) => failures.push(error);
    // Like production: the worker listens and supervises, the API only sends.
    worker = await startPgBoss(database.url, { onError, supervise: true, listen: true });
    api = await startPgBoss(database.url, { onError, supervise: false });
    const noop = async () => {};
    const handlers = Object.fromEntries(JOB_NAMES.map((name) => [name, noop])) as unknown as JobHandlers;
    handlers["computer.checkpoint"] = async (_payload, job) => {
      picked.push({ jobId: job.jobId, at: Date.now() });
      // Busy a while, as a real job is: a job sent meanwhile must not wait for the next poll.
      await new Promise((done) => setTimeout(done, 300));
    };
    await registerJobHandlers(worker.boss, handlers, { pollingIntervalSeconds: POLL_SECONDS });
    // Let every worker's first (immediate) fetch pass, so only a wake-up can fetch again soon.
    await new Promise((done) => setTimeout(done, 1_500));
  }, 60_000);

  afterAll(async () => {
    await api?.boss.stop({ graceful: false });
    await worker?.boss.stop({ graceful: false });
    await database?.drop();
  });

  it("a job sent by another process runs at once, long before the worker's next poll", async () => {
    const sentAt = Date.now();
    const jobId = await api.queue.send("computer.checkpoint", { computerId: "cmp_x", operationId: "op_x" });
    const deadline = sentAt + 10_000;
    while (!picked.some((p) => p.jobId === jobId) && Date.now() < deadline) {
      await new Promise((done) => setTimeout(done, 25));
    }
    const pick = picked.find((p) => p.jobId === jobId);
    expect(pick, `not picked up within 10 s (the poll is ${POLL_SECONDS} s)`).toBeDefined();
    console.log(`picked up ${(pick as { at: number }).at - sentAt} ms after send`);
    expect(failures).toEqual([]);
  }, 20_000);

  it("jobs sent back to back each run at once, also while the worker is busy with the first", async () => {
    const sentAt = Date.now();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push(
        await api.queue.send("computer.checkpoint", { computerId: `cmp_${i}`, operationId: `op_${i}` }),
      );
    }
    const deadline = sentAt + 10_000;
    while (!ids.every((id) => picked.some((p) => p.jobId === id)) && Date.now() < deadline) {
      await new Promise((done) => setTimeout(done, 25));
    }
    const times = ids.map((id) => picked.find((p) => p.jobId === id)?.at);
    console.log(
      `picked up ${times.map((t) => (t ? `${t - sentAt} ms` : "never")).join(", ")} after the first send`,
    );
    expect(times.every((t) => t !== undefined)).toBe(true);
  }, 20_000);

  it("every queue of the catalog notifies", async () => {
    for (const name of JOB_NAMES) {
      const queue = await api.boss.getQueue(name);
      expect(queue?.notify, name).toBe(true);
    }
  });
});
