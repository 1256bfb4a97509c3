/**
 * `/metrics` and `/ready` on the real API process. The scrape is parsed by an npm Prometheus
 * text-format parser (not prom-client), an RPC moves its own series, a caller from elsewhere
 * needs RAKAZO_METRICS_TOKEN, and `/ready` follows the database's migrations.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTestDatabase, type TestDatabase } from "@rakazo/db/testing";
import parsePrometheusTextFormat from "parse-prometheus-text-format";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Child, freePort, killHard, startChild } from "../support/processes.ts";
import { eventually } from "../support/system.ts";

const METRICS_TOKEN = `met_${"m".repeat(40)}`;

describe("operator metrics and readiness on the API process", () => {
  let database: TestDatabase;
  let dataDir: string;
  let api: Child;
  let base: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    dataDir = await mkdtemp(join(tmpdir(), "rakazo-metrics-"));
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    api = startChild("apps/api/src/main.ts", {
      LOG_LEVEL: "info",
      DATABASE_URL: database.url,
      DATA_DIR: dataDir,
      API_HOST: "127.0.0.1",
      API_PORT: String(port),
      RAKAZO_PROVIDER: "fake",
      RAKAZO_METRICS_TOKEN: METRICS_TOKEN,
    });
    await eventually(async () => {
      if (api.process.exitCode !== null) throw new Error(`api exited early:\n${api.output.join("")}`);
      return api.output.join("").includes('"msg":"api.listening"') || undefined;
    }, 30_000);
  }, 60_000);

  afterAll(async () => {
    if (api) await killHard(api);
    await database?.drop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  const rpc = (name: string, body: unknown, token?: string) =>
    fetch(`${base}/rpc/${name}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
    });

  async function scrape(headers: Record<string, string> = {}) {
    const response = await fetch(`${base}/metrics`, { headers });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    return parsePrometheusTextFormat(await response.text());
  }

  /** The RPC counter for one RPC name and result code (0 before its first call). */
  function rpcCount(families: Awaited<ReturnType<typeof scrape>>, name: string, code: string): number {
    const family = families.find((f) => f.name === "rakazo_rpc_requests_total");
    expect(family?.type).toBe("COUNTER");
    const sample = family?.metrics.find((m) => m.labels?.rpc === name && m.labels?.code === code);
    return Number(sample?.value ?? 0);
  }

  it("counts an RPC by name and result code, and reads computers by state on scrape", async () => {
    const setup = await rpc("setup/bootstrap", {});
    expect(setup.status).toBe(200);
    const { result } = (await setup.json()) as { result: { token: string; computerId: string } };

    const before = await scrape();
    expect(before.find((f) => f.name === "rakazo_rpc_duration_seconds")?.type).toBe("HISTOGRAM");
    const okBefore = rpcCount(before, "computer/get", "OK");
    const refusedBefore = rpcCount(before, "computer/get", "UNAUTHENTICATED");

    expect((await rpc("computer/get", { computerId: result.computerId }, result.token)).status).toBe(200);
    expect((await rpc("computer/get", { computerId: result.computerId }, "not-a-token")).status).toBe(401);
    // A path nobody serves is one `unknown` series, not a new label value per path.
    expect((await rpc("made/up-name-1234", {}, result.token)).status).toBe(404);

    const after = await scrape();
    expect(rpcCount(after, "computer/get", "OK")).toBe(okBefore + 1);
    expect(rpcCount(after, "computer/get", "UNAUTHENTICATED")).toBe(refusedBefore + 1);
    expect(rpcCount(after, "unknown", "UNKNOWN_RPC")).toBeGreaterThanOrEqual(1);
    const rpcNames = after
      .find((f) => f.name === "rakazo_rpc_requests_total")
      ?.metrics.map((m) => m.labels?.rpc);
    expect(rpcNames).not.toContain("made/up-name-1234");

    // The space's Team Computer exists from setup on; the gauge is read from the database.
    const computers = after.find((f) => f.name === "rakazo_computers");
    expect(computers?.type).toBe("GAUGE");
    const total = computers?.metrics.reduce((sum, m) => sum + Number(m.value), 0);
    expect(total).toBe(1);
    expect(after.find((f) => f.name === "rakazo_job_queue_depth")?.type).toBe("GAUGE");
  });

  it("answers a caller from elsewhere only with RAKAZO_METRICS_TOKEN", async () => {
    const forwarded = { "x-forwarded-for": "198.51.100.7" };
    const refused = await fetch(`${base}/metrics`, { headers: forwarded });
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("UNAUTHENTICATED");
    const wrong = await fetch(`${base}/metrics`, {
      headers: { ...forwarded, authorization: `Bearer ${METRICS_TOKEN.slice(0, -1)}x` },
    });
    expect(wrong.status).toBe(401);
    const families = await scrape({ ...forwarded, authorization: `Bearer ${METRICS_TOKEN}` });
    expect(families.some((f) => f.name === "rakazo_rpc_duration_seconds")).toBe(true);
  });

  it("is ready while every shipped migration is applied, and 503 with the reason when one is not", async () => {
    const ready = await fetch(`${base}/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: "ready" });

    const sql = postgres(database.url, { max: 1, onnotice: () => {} });
    try {
      const [newest] = await sql<{ id: number; hash: string; created_at: string }[]>`
        delete from drizzle.__drizzle_migrations
        where id = (select max(id) from drizzle.__drizzle_migrations) returning id, hash, created_at`;
      try {
        const behind = await fetch(`${base}/ready`);
        expect(behind.status).toBe(503);
        expect(await behind.json()).toMatchObject({ status: "not_ready", reason: "migrations_pending" });
        // Liveness is not readiness: the process is alive and says so.
        expect((await fetch(`${base}/health`)).status).toBe(200);
      } finally {
        await sql`insert into drizzle.__drizzle_migrations (id, hash, created_at)
          values (${newest?.id ?? 0}, ${newest?.hash ?? ""}, ${newest?.created_at ?? 0})`;
      }
      expect((await fetch(`${base}/ready`)).status).toBe(200);
    } finally {
      await sql.end();
    }
  });
});
