/**
 * The one composition root (ARCH-4): API and worker, parsing their own environment
 * slices, get the same ServiceContext from one environment.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseApiEnv, parseWorkerEnv } from "@rakazo/config";
import { createTestDatabase, type TestDatabase } from "@rakazo/db/testing";
import { createLogger } from "@rakazo/log";
import { systemRunHooks } from "@rakazo/services";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRuntime, type Runtime } from "./create-runtime.ts";
import { runtimeConfigFromEnv } from "./from-env.ts";

let database: TestDatabase;
let dataDir: string;
const opened: Runtime[] = [];
const log = createLogger({ level: "error", write: () => {} });

beforeAll(async () => {
  database = await createTestDatabase();
  dataDir = await mkdtemp(join(tmpdir(), "rakazo-runtime-"));
});
afterAll(async () => {
  for (const runtime of opened) await runtime.close({ graceful: false, timeoutMs: 2_000 });
  await database?.drop();
  await rm(dataDir, { recursive: true, force: true });
});

async function both(env: Record<string, string>): Promise<{ api: Runtime; worker: Runtime }> {
  const api = await createRuntime({
    ...runtimeConfigFromEnv(parseApiEnv(env), { role: "api", log }),
    migrate: false,
  });
  opened.push(api);
  const worker = await createRuntime({
    ...runtimeConfigFromEnv(parseWorkerEnv(env), { role: "worker", log }),
    migrate: false,
  });
  opened.push(worker);
  return { api, worker };
}

describe("createRuntime", () => {
  it("builds the same context for the API and the worker from one environment", async () => {
    const env = {
      DATABASE_URL: database.url,
      DATA_DIR: dataDir,
      RAKAZO_PROVIDER: "fake",
      RAKAZO_COMPUTER_MEMORY_MIB: "2048",
      AGENT_MODEL: "openrouter:test/model",
      // Variables of the other app's slice do not change what the context holds.
      WORKER_POLL_SECONDS: "2",
      SCREEN_URL_MAX_TTL_SECONDS: "600",
    };
    const { api, worker } = await both(env);
    const shape = (r: Runtime) => ({
      provider: { kind: r.ctx.provider.kind, capabilities: r.ctx.provider.capabilities },
      homes: r.ctx.homes.kind,
      keyId: r.ctx.keys.keyId,
      sizing: r.ctx.sizing,
      agentModel: r.ctx.agentModel,
      runHooks: r.ctx.runHooks,
      keys: Object.keys(r.ctx).sort(),
    });
    expect(shape(worker)).toEqual(shape(api));
    expect(api.ctx.runHooks).toBe(systemRunHooks);
    expect(api.ctx.sizing?.defaults.memoryMib).toBe(2048);
    // One master key (generated once into DATA_DIR): what the API wraps, the worker unwraps.
    const wrapped = await api.ctx.keys.wrap(randomBytes(32), "space:spc_x");
    await expect(worker.ctx.keys.unwrap(wrapped, "space:spc_x")).resolves.toHaveLength(32);
    // Both reach the same machines: one provisioned by the API is running for the worker.
    const machine = await api.ctx.provider.provision({
      computerId: "cmp_rt",
      mode: "team",
      homeKey: "home_rt",
    });
    expect(await worker.ctx.provider.status(machine.ref)).toBe("running");
  });

  it("an unresolved RAKAZO_PROVIDER=auto stops the process instead of becoming fake", async () => {
    const env = { DATABASE_URL: database.url, DATA_DIR: dataDir, RAKAZO_PROVIDER: "auto" };
    expect(() => runtimeConfigFromEnv(parseApiEnv(env), { role: "api", log })).toThrow(
      /RAKAZO_PROVIDER=auto is unresolved/,
    );
    expect(() => runtimeConfigFromEnv(parseWorkerEnv(env), { role: "worker", log })).toThrow(
      /RAKAZO_PROVIDER=docker, host or fake/,
    );
  });
});

/**
 * A stand-in for a cloud service on loopback: answers every call 404 with the JSON error body
 * the services send, and records what it was asked, so a test sees that the adapter went to the
 * URL from the environment (never the cloud) with the key from the environment.
 */
async function notFoundService(): Promise<{
  url: string;
  seen: { path: string; headers: IncomingHttpHeaders }[];
  close(): Promise<void>;
}> {
  const seen: { path: string; headers: IncomingHttpHeaders }[] = [];
  const server = createServer((req, res) => {
    seen.push({ path: req.url ?? "", headers: req.headers });
    res.writeHead(404, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        code: 404,
        message: "sandbox not found",
        error: { code: "not_found", message: "not found" },
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe("createRuntime with a cloud provider from the environment", () => {
  const cases = [
    { kind: "e2b", key: "E2B_API_KEY", urls: (u: string) => ({ E2B_API_URL: u, E2B_SANDBOX_URL: u }) },
    {
      kind: "novita",
      key: "NOVITA_API_KEY",
      urls: (u: string) => ({ NOVITA_API_URL: u, NOVITA_SANDBOX_URL: u }),
    },
    { kind: "daytona", key: "DAYTONA_API_KEY", urls: (u: string) => ({ DAYTONA_API_URL: `${u}/api` }) },
    { kind: "boat", key: "BOAT_API_KEY", urls: (u: string) => ({ BOAT_API_URL: `${u}/api/v1` }) },
  ] as const;

  it.each(cases)(
    "$kind: API and worker build it, and it calls the configured URL with the key",
    async (c) => {
      const service = await notFoundService();
      try {
        const apiKey = `${c.kind}_key_${randomBytes(8).toString("hex")}`;
        const { api, worker } = await both({
          DATABASE_URL: database.url,
          DATA_DIR: dataDir,
          RAKAZO_PROVIDER: c.kind,
          [c.key]: apiKey,
          ...c.urls(service.url),
        });
        expect(api.ctx.provider.kind).toBe(c.kind);
        expect(worker.ctx.provider.kind).toBe(c.kind);
        expect(worker.ctx.provider.capabilities).toEqual(api.ctx.provider.capabilities);
        // Building made no call: the supervisor bundle and the service are used on first need.
        expect(service.seen).toEqual([]);
        // A machine the service does not know is missing (PRV-3), asked of the configured URL.
        expect(await worker.ctx.provider.status(`rakazo-missing-${c.kind}`)).toBe("missing");
        expect(service.seen.length).toBeGreaterThan(0);
        for (const request of service.seen) {
          expect(Object.values(request.headers).join(" ")).toContain(apiKey);
          expect(request.path).not.toContain(apiKey);
        }
      } finally {
        await service.close();
      }
    },
  );

  it("a cloud provider without its key stops the process, naming the variable", () => {
    const env = { DATABASE_URL: database.url, DATA_DIR: dataDir, RAKAZO_PROVIDER: "daytona" };
    expect(() => runtimeConfigFromEnv(parseWorkerEnv(env), { role: "worker", log })).toThrow(
      /DAYTONA_API_KEY/,
    );
  });
});
