/**
 * Fault drill (ARCH-4, OPS-4): Postgres restarted under a live system. A PRIVATE
 * Postgres (the launcher's embedded server, in a temp folder on a free loopback port — never the
 * shared test server) carries a real API process and a real worker process. A provision job is
 * caught mid-run (its provider call held for a few seconds) when Postgres goes down; requests
 * during the outage are refused with a stable code; Postgres comes back on the same port; both
 * processes carry on without a restart, the interrupted job finishes once (not lost, not run
 * twice), and new work goes through. Figures go to the bench report.
 */
import { chmod, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { computerOperations, connectDatabase, type DatabaseHandle, migrateDatabase } from "@rakazo/db";
import { type EmbeddedDatabase, startEmbeddedPostgres } from "@rakazo/launcher/embedded-postgres";
import { createLogger } from "@rakazo/log";
import { createUserWithSpace } from "@rakazo/services";
import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordFigures } from "../support/figures.ts";
import { type Child, freePort, killHard, startChild, startTestWorker } from "../support/processes.ts";
import { eventually } from "../support/system.ts";

/** How long the worker's provider holds every provision: the window the restart lands in. */
const SLOW_PROVISION_MS = 4_000;

let dir: string;
let pg: EmbeddedDatabase;
let pgPort: number;
let handle: DatabaseHandle;
let api: string;
const children: Child[] = [];
const quiet = createLogger({ level: "error", write: () => {} });

const startPostgres = () => startEmbeddedPostgres({ dataDir: join(dir, "pg"), port: pgPort, log: quiet });

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "rakazo-drill-pg-"));
  // As root the server runs as `postgres`, which must reach its data folder.
  await chmod(dir, 0o755);
  pgPort = await freePort();
  pg = await startPostgres();
  await migrateDatabase(pg.url);
  handle = connectDatabase(pg.url, { max: 2 });
  const dataDir = join(dir, "data");
  const port = await freePort();
  const apiChild = startChild("apps/api/src/main.ts", {
    DATABASE_URL: pg.url,
    DATA_DIR: dataDir,
    RAKAZO_PROVIDER: "fake",
    API_HOST: "127.0.0.1",
    API_PORT: String(port),
  });
  children.push(apiChild);
  api = `http://127.0.0.1:${port}`;
  await eventually(async () => {
    if (apiChild.process.exitCode !== null) throw new Error(`api exited:\n${apiChild.output.join("")}`);
    return (
      (await fetch(`${api}/health`).then(
        (r) => r.ok,
        () => false,
      )) || undefined
    );
  }, 60_000);
  children.push(
    await startTestWorker({
      DATABASE_URL: pg.url,
      TEST_DATA_DIR: dataDir,
      TEST_SLOW_PROVISION_MS: String(SLOW_PROVISION_MS),
    }),
  );
}, 120_000);

afterAll(async () => {
  for (const child of children) await killHard(child);
  await handle?.close();
  await pg?.stop();
  await rm(dir, { recursive: true, force: true });
});

async function call(name: string, body: unknown, token: string) {
  const response = await fetch(`${api}/rpc/${name}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as any };
}

describe("drill: Postgres restarted mid-run", () => {
  it("API and worker reconnect; the interrupted job finishes once; nothing is lost", async () => {
    const tenant = await createUserWithSpace(handle.db, {
      userName: "drill",
      spaceName: "drill space",
      botName: "drill-bot",
      providerKind: "fake",
    });
    const created = await call("computer/create", { spaceId: tenant.spaceId }, tenant.token);
    expect(created.status, JSON.stringify(created.json)).toBe(200);
    const computerId = created.json.result.id as string;
    // The provision job is claimed and inside its (held) provider call.
    await eventually(async () => {
      const [op] = await handle.db
        .select()
        .from(computerOperations)
        .where(eq(computerOperations.computerId, computerId));
      return op?.status === "running" ? op : undefined;
    });

    const down = performance.now();
    await pg.stop();
    // During the outage the API refuses cleanly: a stable code, not a hang or a crash.
    const during = await call("computer/get", { computerId }, tenant.token);
    expect(during.status).toBe(503);
    expect(during.json.error.code).toBe("DATABASE_UNAVAILABLE");
    pg = await startPostgres();
    const back = performance.now();

    let failedRequests = 0;
    await eventually(async () => {
      // A process that died while waiting is the failure to report, with all it printed.
      for (const child of children)
        if (child.process.exitCode !== null) throw new Error(`a process exited:\n${child.output.join("")}`);
      const got = await call("computer/get", { computerId }, tenant.token);
      if (got.status !== 200) failedRequests++;
      return got.json.result?.state === "running" || undefined;
    }, 60_000);
    const recovered = performance.now();

    // Neither process restarted: they reconnected.
    for (const child of children) expect(child.process.exitCode, child.output.join("")).toBeNull();
    // New work goes through API and worker after the restart.
    const second = await call("computer/create", { spaceId: tenant.spaceId }, tenant.token);
    expect(second.status, JSON.stringify(second.json)).toBe(200);
    await eventually(async () => {
      const got = await call("computer/get", { computerId: second.json.result.id }, tenant.token);
      return got.json.result?.state === "running" || undefined;
    }, 60_000);

    // One operation per request, each succeeded; each job completed and ran once.
    const operations = await handle.db.select().from(computerOperations);
    expect(operations.map((o) => [o.kind, o.status])).toEqual([
      ["provision", "succeeded"],
      ["provision", "succeeded"],
    ]);
    const jobs = (await handle.db.execute(
      sql`select state, retry_count from pgboss.job where id::text in ${operations.map((o) => o.jobId as string)}`,
    )) as unknown as { state: string; retry_count: number }[];
    expect(jobs).toEqual([
      { state: "completed", retry_count: 0 },
      { state: "completed", retry_count: 0 },
    ]);

    recordFigures("drill-postgres-restart", [
      { name: "Postgres down (stop → back)", value: Math.round(back - down), unit: "ms" },
      {
        name: "recovery after Postgres is back (interrupted job finished)",
        value: Math.round(recovered - back),
        unit: "ms",
      },
      { name: "requests refused after Postgres was back", value: failedRequests, unit: "requests" },
      {
        name: "jobs lost or run twice",
        value: 2 - jobs.filter((j) => j.state === "completed" && j.retry_count === 0).length,
        unit: "jobs",
        target: "= 0",
      },
      {
        name: "processes that died",
        value: children.filter((c) => c.process.exitCode !== null).length,
        unit: "processes",
        target: "= 0",
      },
    ]);
  }, 120_000);
});
