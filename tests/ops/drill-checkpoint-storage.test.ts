/**
 * Fault drills (PER-2, PER-3, PER-4): a checkpoint whose storage fails under it,
 * through the real stop job on the fake provider (persistence is the point, not the machine).
 *
 * - Disk full: the home store's DATA_DIR is a 4 MiB tmpfs this test mounts; the workspace grew
 *   past it. The stop's checkpoint is retried by its job, then fails visibly with
 *   `STORAGE_FULL` naming ENOSPC; the computer stays running, revision 1 stays the row's and
 *   restores byte-identically, no staging folder is left; once space is freed the next stop saves.
 * - S3 unreachable: the bucket sits behind a loopback relay turned into a blackhole (connections
 *   accepted, never answered). The checkpoint times out, is retried, then fails with
 *   `STORAGE_ERROR`; the bucket holds revision 1 only; when the store answers again the next
 *   stop saves revision 2 and revision 1 is gone (latest-only).
 *
 * Time to a visible failure, attempts and time to save after recovery go to the bench report.
 */

import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { computerOperations, computers } from "@rakazo/db";
import { type AgentHomeStore, LocalAgentHomeStore, ObjectAgentHomeStore } from "@rakazo/homes";
import { readTree, startTestS3Server, type TestS3Server } from "@rakazo/homes/testing";
import { dataKeyForStore } from "@rakazo/services";
import { desc, eq, sql } from "drizzle-orm";
import { afterAll, describe, expect, it } from "vitest";
import { type BlackholeProxy, startBlackholeProxy } from "../support/blackhole-proxy.ts";
import { recordFigures } from "../support/figures.ts";
import { createTestSystem, eventually, runningComputer, type TestSystem } from "../support/system.ts";

const run = promisify(execFile);

/** A computer on `system` with one small saved revision; returns what that revision holds. */
async function computerWithRevisionOne(system: TestSystem, store: AgentHomeStore) {
  const tenant = await system.newTenant("drill");
  const computerId = await runningComputer(system, tenant);
  const sandbox = async () => system.provider.sandbox((await row(system, computerId)).providerRef as string);
  await (await sandbox()).files.write("notes.txt", "revision one");
  await (await sandbox()).files.write("data/blob.bin", randomBytes(256 * 1024));
  expect(await stop(system, tenant.token, computerId)).toMatchObject({ status: "succeeded" });
  const saved = await row(system, computerId);
  expect(saved.homeRevision).toBe(1);
  const revisionOne = await readTree(store.homeDir(saved.homeKey));
  await system.rpc("computer/start", { computerId }, tenant.token);
  await eventually(async () => ((await row(system, computerId)).state === "running" ? true : undefined));
  return { tenant, computerId, homeKey: saved.homeKey, revisionOne, sandbox };
}

const row = async (system: TestSystem, id: string) =>
  (
    await system.ctx.db.select().from(computers).where(eq(computers.id, id))
  )[0] as typeof computers.$inferSelect;

/** Requests a stop and waits for its operation to end; returns the operation and its job's retries. */
async function stop(system: TestSystem, token: string, computerId: string) {
  const answer = await system.rpc("computer/stop", { computerId }, token);
  expect(answer.status, JSON.stringify(answer.json)).toBe(200);
  const operation = await eventually(async () => {
    const [op] = await system.ctx.db
      .select()
      .from(computerOperations)
      .where(eq(computerOperations.computerId, computerId))
      .orderBy(desc(computerOperations.createdAt))
      .limit(1);
    return op && ["succeeded", "failed"].includes(op.status) ? op : undefined;
  }, 90_000);
  const [job] = (await system.ctx.db.execute(
    sql`select retry_count from pgboss.job where id::text = ${operation.jobId}`,
  )) as unknown as { retry_count: number }[];
  return { ...operation, attempts: (job?.retry_count ?? 0) + 1 };
}

// Mounting the small tmpfs needs root: skipped only locally without it; under CI=true it runs
// (and fails loudly if it cannot mount).
const canMount = process.getuid?.() === 0 || process.env.CI === "true";

describe.skipIf(!canMount)("drill: the disk fills during a checkpoint", () => {
  let mount: string | undefined;
  let system: TestSystem | undefined;
  afterAll(async () => {
    await system?.close();
    if (mount) {
      await run("umount", [mount]);
      await rm(mount, { recursive: true, force: true });
    }
  });

  it("fails with STORAGE_FULL (ENOSPC); revision 1 stays restorable; nothing half-written", async () => {
    mount = await mkdtemp(join(tmpdir(), "rakazo-drill-full-"));
    await run("mount", ["-t", "tmpfs", "-o", "size=4m", "rakazo-drill", mount]);
    const store = new LocalAgentHomeStore({ dataDir: mount as string });
    system = await createTestSystem({ homes: () => store });
    await system.startWorker();
    const { tenant, computerId, homeKey, revisionOne, sandbox } = await computerWithRevisionOne(
      system,
      store,
    );

    await (await sandbox()).files.write("data/huge.bin", randomBytes(8 * 1024 * 1024));
    const started = performance.now();
    const failed = await stop(system, tenant.token, computerId);
    const toFailure = performance.now() - started;
    expect(failed.status).toBe("failed");
    expect(failed.error).toMatch(/^STORAGE_FULL: .*\(ENOSPC\)/);
    const after = await row(system, computerId);
    expect(after).toMatchObject({ state: "running", homeRevision: 1 });
    expect(after.lastError).toMatch(/^STORAGE_FULL: /);
    // No half-written revision: no staging left beside the home, which still holds revision 1.
    const leftovers = (await readdir(join(mount, "homes"))).filter((name) => name !== homeKey);
    expect(leftovers).toEqual([]);
    const restored = await store.materialize({ homeKey, revision: 1 });
    expect(await readTree(restored)).toEqual(revisionOne);

    // Space freed (the big file shrinks): the next stop saves revision 2.
    await (await sandbox()).files.write("data/huge.bin", "small now");
    const recovered = performance.now();
    expect(await stop(system, tenant.token, computerId)).toMatchObject({ status: "succeeded" });
    expect((await row(system, computerId)).homeRevision).toBe(2);

    recordFigures("drill-disk-full", [
      { name: "time to a visible STORAGE_FULL failure", value: Math.round(toFailure), unit: "ms" },
      { name: "checkpoint attempts before failing", value: failed.attempts, unit: "attempts" },
      {
        name: "time to save once space is freed",
        value: Math.round(performance.now() - recovered),
        unit: "ms",
      },
      {
        name: "half-written revisions left (staging folders)",
        value: leftovers.length,
        unit: "revisions",
        target: "= 0",
      },
    ]);
  }, 180_000);
});

describe("drill: the S3 store is unreachable at checkpoint time", () => {
  let s3: TestS3Server | undefined;
  let proxy: BlackholeProxy | undefined;
  let system: TestSystem | undefined;
  afterAll(async () => {
    await system?.close();
    await proxy?.close();
    await s3?.close();
  });

  it("retries, fails with STORAGE_ERROR, writes nothing; saves once the store is back", async () => {
    s3 = await startTestS3Server();
    const direct = s3.storage;
    proxy = await startBlackholeProxy(Number(new URL(direct.endpoint as string).port));
    // Short timeouts keep the drill short; production waits 60 s of silence (object-store.ts).
    const storage = {
      ...direct,
      endpoint: `http://127.0.0.1:${proxy.port}`,
      requestTimeoutMs: 1_000,
      connectionTimeoutMs: 1_000,
    };
    let store: ObjectAgentHomeStore | undefined;
    system = await createTestSystem({
      homes: (dataDir) => {
        store = new ObjectAgentHomeStore({ dataDir, storage });
        return store;
      },
    });
    await system.startWorker();
    if (!store) throw new Error("no store");
    const { tenant, computerId, homeKey, revisionOne, sandbox } = await computerWithRevisionOne(
      system,
      store,
    );
    const bucket = new ObjectAgentHomeStore({ dataDir: join(system.dataDir, "direct"), storage: direct });
    const stored = async () => {
      const keys: string[] = [];
      for await (const object of bucket.listObjects()) keys.push(object.key);
      return keys;
    };
    expect(await stored()).toEqual([`homes/${homeKey}/1`]);

    await (await sandbox()).files.write("notes.txt", "revision two");
    proxy.blackhole();
    const started = performance.now();
    const failed = await stop(system, tenant.token, computerId);
    const toFailure = performance.now() - started;
    expect(failed.status).toBe("failed");
    expect(failed.error).toMatch(/^STORAGE_ERROR: upload of homes\/.+\/2 failed/);
    expect(failed.attempts).toBe(3);
    expect(await row(system, computerId)).toMatchObject({ state: "running", homeRevision: 1 });
    // Nothing half-written: the bucket holds revision 1 alone, and it still restores.
    const afterFailure = await stored();
    expect(afterFailure).toEqual([`homes/${homeKey}/1`]);
    // A fresh host (empty cache) restores revision 1 byte-identically from the bucket.
    const fresh = new ObjectAgentHomeStore({ dataDir: join(system.dataDir, "fresh"), storage: direct });
    const dataKey = await dataKeyForStore(system.ctx, await row(system, computerId), { create: false });
    const restored = await fresh.materialize({ homeKey, revision: 1, dataKey });
    expect(await readTree(restored)).toEqual(revisionOne);

    // The store answers again: the next stop saves revision 2, and revision 1 is gone.
    proxy.restore();
    const recovered = performance.now();
    expect(await stop(system, tenant.token, computerId)).toMatchObject({ status: "succeeded" });
    expect((await row(system, computerId)).homeRevision).toBe(2);
    expect(await stored()).toEqual([`homes/${homeKey}/2`]);

    recordFigures("drill-s3-unreachable", [
      { name: "time to a visible STORAGE_ERROR failure", value: Math.round(toFailure), unit: "ms" },
      { name: "checkpoint attempts before failing", value: failed.attempts, unit: "attempts" },
      {
        name: "time to save once the store is back",
        value: Math.round(performance.now() - recovered),
        unit: "ms",
      },
      {
        name: "objects half-written",
        value: afterFailure.filter((key) => key !== `homes/${homeKey}/1`).length,
        unit: "objects",
        target: "= 0",
      },
    ]);
  }, 180_000);
});
