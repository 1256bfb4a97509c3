/**
 * A whole control plane in-process for integration tests: a cloned database, real pg-boss,
 * the fake provider on a temp folder, the API app, and (optionally) a worker. Logs are
 * captured so tests can assert what was (and was not) written.
 */

import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApiApp } from "@rakazo/api/app";
import { type AgentHomeStore, LocalAgentHomeStore, LocalKeyWrapper } from "@rakazo/homes";
import { startPgBoss } from "@rakazo/jobs";
import { createLogger } from "@rakazo/log";
import { createFakeProvider, type SandboxProvider } from "@rakazo/sandbox";
import {
  createUserWithSpace,
  type ServiceContext,
  startActivityFeed,
  systemRunHooks,
} from "@rakazo/services";
import { type RunningWorker, startWorker, type WorkerOptions } from "@rakazo/worker/worker";
import type { Hono } from "hono";
import { createTestDatabase, type TestDatabase } from "./database.ts";

export interface TestSystem {
  readonly database: TestDatabase;
  readonly app: Hono;
  readonly ctx: ServiceContext;
  readonly provider: SandboxProvider;
  readonly logLines: string[];
  /** The data dir shared by the provider and the home store (`DATA_DIR`). */
  readonly dataDir: string;
  startWorker(options?: Pick<WorkerOptions, "idle" | "agent">): Promise<RunningWorker>;
  /** POST /rpc/<name> with an optional bearer token; returns status and parsed JSON. */
  rpc(name: string, body: unknown, token?: string): Promise<{ status: number; json: any }>;
  newTenant(
    label: string,
  ): Promise<{ userId: string; spaceId: string; botId: string; token: string; tokenId: string }>;
  close(): Promise<void>;
}

export async function createTestSystem(
  options: {
    bootstrapToken?: string;
    provider?: (dataDir: string) => Promise<SandboxProvider>;
    /** Lets the API accept agent/run (the worker must be started with a matching `agent`). */
    agentModel?: string;
    /** The home store (default: a LocalAgentHomeStore on the same data dir as the provider). */
    homes?: (dataDir: string) => Promise<AgentHomeStore> | AgentHomeStore;
  } = {},
): Promise<TestSystem> {
  const database = await createTestDatabase();
  const rootDir = await mkdtemp(join(tmpdir(), "rakazo-it-"));
  const provider = options.provider ? await options.provider(rootDir) : createFakeProvider({ rootDir });
  const logLines: string[] = [];
  const log = createLogger({ level: "debug", write: (line) => logLines.push(line) });
  const { boss, queue } = await startPgBoss(database.url, {
    supervise: false,
    onError: (error) => log.error("pgboss.error", { error }),
  });
  const homes = options.homes ? await options.homes(rootDir) : new LocalAgentHomeStore({ dataDir: rootDir });
  const keys = new LocalKeyWrapper(randomBytes(32));
  const ctx: ServiceContext = {
    db: database.db,
    jobs: queue,
    provider,
    log,
    homes,
    keys,
    runHooks: systemRunHooks,
    ...(options.agentModel ? { agentModel: options.agentModel } : {}),
  };
  const activityFeed = await startActivityFeed({ db: database.db, log });
  const app = createApiApp({ ctx, log, bootstrapToken: options.bootstrapToken, activityFeed });
  const workers: RunningWorker[] = [];

  return {
    database,
    app,
    ctx,
    provider,
    logLines,
    dataDir: rootDir,
    async startWorker(options = {}) {
      const worker = await startWorker({
        ...options,
        databaseUrl: database.url,
        db: database.db,
        provider,
        homes,
        keys,
        log,
        pollingIntervalSeconds: 0.5,
      });
      workers.push(worker);
      return worker;
    },
    async rpc(name, body, token) {
      const res = await app.request(`/rpc/${name}`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
        body: typeof body === "string" ? body : JSON.stringify(body),
      });
      return { status: res.status, json: await res.json() };
    },
    async newTenant(label) {
      return createUserWithSpace(database.db, {
        userName: label,
        spaceName: `${label}'s space`,
        botName: `${label}-bot`,
        providerKind: provider.kind,
      });
    },
    async close() {
      for (const worker of workers) await worker.stop({ timeoutMs: 5_000 });
      await activityFeed.close();
      await boss.stop({ graceful: false, timeout: 2_000 });
      await database.drop();
      await rm(rootDir, { recursive: true, force: true });
    },
  };
}

/** Polls until `check` returns a value (not undefined), or fails after `timeoutMs`. */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((done) => setTimeout(done, 100));
  }
}

/** A tenant with a running computer, ready for desktop and run tests. */
export async function runningComputer(
  system: TestSystem,
  tenant: { spaceId: string; token: string },
  body: Record<string, unknown> = {},
): Promise<string> {
  const created = await system.rpc("computer/create", { spaceId: tenant.spaceId, ...body }, tenant.token);
  if (created.status !== 200) throw new Error(`computer/create failed: ${JSON.stringify(created.json)}`);
  const id: string = created.json.result.id;
  await eventually(async () => {
    const res = await system.rpc("computer/get", { computerId: id }, tenant.token);
    return res.json.result.state === "running" ? true : undefined;
  });
  return id;
}
