/**
 * The worker's operator listener: the checkpoint histograms move when a checkpoint's completion
 * line is written in this process, `/ready` follows the database, and a caller from elsewhere
 * needs the metrics token.
 */
import { createServer } from "node:net";
import { createTestDatabase, type TestDatabase } from "@rakazo/db/testing";
import { JOB_NAMES, startPgBoss } from "@rakazo/jobs";
import { createLogger } from "@rakazo/log";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOperatorListener } from "./operator-listener.ts";

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const { port } = server.address() as { port: number };
  await new Promise((done) => server.close(done));
  return port;
}

describe("worker operator listener", () => {
  let database: TestDatabase;
  let listener: { close(): Promise<void> };
  let base: string;
  const token = `met_${"w".repeat(40)}`;
  const log = createLogger({ level: "info", write: () => {} });

  beforeAll(async () => {
    database = await createTestDatabase();
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    listener = await startOperatorListener({ db: database.db, log, host: "127.0.0.1", port, token });
  });

  afterAll(async () => {
    await listener?.close();
    await database?.drop();
  });

  it("observes each finished checkpoint's duration and size by status", async () => {
    const sampleCount = (text: string, name: string) =>
      Number(new RegExp(`^${name}_count\\{[^}]*status="saved"[^}]*\\} (\\d+)$`, "m").exec(text)?.[1] ?? 0);
    const before = await (await fetch(`${base}/metrics`)).text();
    log.info("computer.home_checkpoint", {
      computerId: "cmp_x",
      status: "saved",
      bytes: 3 * 1024 * 1024,
      ms: 1500,
    });
    const after = await (await fetch(`${base}/metrics`)).text();
    expect(sampleCount(after, "rakazo_checkpoint_duration_seconds")).toBe(
      sampleCount(before, "rakazo_checkpoint_duration_seconds") + 1,
    );
    expect(sampleCount(after, "rakazo_checkpoint_bytes")).toBe(
      sampleCount(before, "rakazo_checkpoint_bytes") + 1,
    );
    // 3 MiB falls in the 10 MiB bucket, not the 1 MiB one.
    expect(after).toMatch(/^rakazo_checkpoint_bytes_bucket\{le="10485760",[^}]*status="saved"[^}]*\} 1$/m);
    expect(after).toMatch(/^rakazo_checkpoint_bytes_bucket\{le="1048576",[^}]*status="saved"[^}]*\} 0$/m);
  });

  it("reads each pg-boss queue's waiting jobs and the oldest one's age on scrape", async () => {
    const jobs = await startPgBoss(database.url, { onError: () => {}, supervise: false });
    try {
      const [queue = "missing"] = JOB_NAMES;
      await jobs.boss.send(queue, {});
      await jobs.boss.send(queue, {});
      const text = await (await fetch(`${base}/metrics`)).text();
      expect(text).toMatch(new RegExp(`^rakazo_job_queue_depth\\{queue="${queue}"[^}]*\\} 2$`, "m"));
      const age = Number(
        new RegExp(`^rakazo_job_queue_oldest_seconds\\{queue="${queue}"[^}]*\\} (\\S+)$`, "m").exec(
          text,
        )?.[1],
      );
      expect(age).toBeGreaterThanOrEqual(0);
      expect(age).toBeLessThan(60);
    } finally {
      await jobs.boss.stop({ graceful: false, close: true });
    }
  });

  it("is ready on a migrated database and refuses a forwarded caller without the token", async () => {
    expect((await fetch(`${base}/ready`)).status).toBe(200);
    const forwarded = { "x-forwarded-for": "198.51.100.7" };
    expect((await fetch(`${base}/metrics`, { headers: forwarded })).status).toBe(401);
    const withToken = await fetch(`${base}/metrics`, {
      headers: { ...forwarded, authorization: `Bearer ${token}` },
    });
    expect(withToken.status).toBe(200);
  });
});
