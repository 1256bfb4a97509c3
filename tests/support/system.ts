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
import { createClient, type RakazoClient } from "@rakazo/client";
import { createTestDatabase, type TestDatabase } from "@rakazo/db/testing";
import { type AgentHomeStore, LocalAgentHomeStore, LocalKeyWrapper } from "@rakazo/homes";
import { createLogger } from "@rakazo/log";
import { registerLogSecret, registerSecretsIn } from "@rakazo/log/testing";
import { createRuntime, type RuntimeConfig } from "@rakazo/runtime";
import { createFakeProvider, type SandboxProvider } from "@rakazo/sandbox";
import {
  createUserWithSpace,
  type ServiceContext,
  startActivityFeed,
  startRunEventFeed,
} from "@rakazo/services";
import { type RunningWorker, startWorker, type WorkerOptions } from "@rakazo/worker/worker";
import type { Hono } from "hono";
import { type HeadlessBrowserRuntime, startHeadlessBrowsers } from "./headless-browser.ts";

export interface TestSystem {
  readonly database: TestDatabase;
  readonly app: Hono;
  readonly ctx: ServiceContext;
  readonly provider: SandboxProvider;
  readonly logLines: string[];
  /** The headless browsers of `BROWSER_PROVIDER=emulator`, when asked for. */
  readonly headless?: HeadlessBrowserRuntime;
  /** The data dir shared by the provider and the home store (`DATA_DIR`). */
  readonly dataDir: string;
  startWorker(
    options?: Pick<WorkerOptions, "idle" | "agent" | "reconciler" | "heartbeatMs" | "shutdown">,
  ): Promise<RunningWorker>;
  /** The typed client (@rakazo/client) wired to the in-process app, acting with `token`. */
  client(token?: string): RakazoClient;
  /** POST /rpc/<name> with an optional bearer token; returns status and parsed JSON (raw checks). */
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
    /** Starts headless Chromium on demand for `BROWSER_PROVIDER=emulator` page tools (BRW-7). */
    headlessBrowsers?: boolean;
    /** Enables the external computer surface with this token. */
    externalToken?: string;
    /** Per-space quotas for API and worker (default: DEFAULT_SPACE_QUOTAS). */
    quotas?: RuntimeConfig["quotas"];
    /**
     * Mints screen capabilities (`computer/screenUrl`) with a fresh keyring. There is no web
     * service: a test opens the screen at the computer's gateway with `authorizeScreen`.
     */
    screens?: boolean;
  } = {},
): Promise<TestSystem> {
  const database = await createTestDatabase();
  const rootDir = await mkdtemp(join(tmpdir(), "rakazo-it-"));
  const provider = options.provider ? await options.provider(rootDir) : createFakeProvider({ rootDir });
  const logLines: string[] = [];
  const log = createLogger({ level: "debug", write: (line) => logLines.push(line) });
  const homes = options.homes ? await options.homes(rootDir) : new LocalAgentHomeStore({ dataDir: rootDir });
  const masterKey = randomBytes(32);
  registerLogSecret(masterKey.toString("hex"), "the master key (hex)");
  registerLogSecret(masterKey.toString("base64"), "the master key (base64)");
  registerLogSecret(options.bootstrapToken, "the bootstrap token");
  registerLogSecret(options.externalToken, "the external computer token");
  const keys = new LocalKeyWrapper(masterKey);
  const screenMaster = randomBytes(32);
  registerLogSecret(screenMaster.toString("base64"), "the screen master key");
  const headless: HeadlessBrowserRuntime | undefined = options.headlessBrowsers
    ? startHeadlessBrowsers()
    : undefined;
  // The same composition root as apps/api and apps/worker, with the pieces this test built.
  const shared: Omit<RuntimeConfig, "role"> = {
    databaseUrl: database.url,
    db: database.db,
    log,
    provider,
    homes: { store: homes, keys },
    ...(options.agentModel ? { agentModel: options.agentModel } : {}),
    ...(headless ? { headlessBrowsers: headless.browsers } : {}),
    ...(options.quotas ? { quotas: options.quotas } : {}),
    ...(options.screens
      ? {
          screens: {
            keyring: { activeKid: "k1", masters: new Map([["k1", screenMaster]]) },
            webBaseUrl: "http://127.0.0.1:9",
          },
        }
      : {}),
  };
  const api = await createRuntime({ ...shared, role: "api" });
  const { ctx } = api;
  const activityFeed = await startActivityFeed({ db: database.db, log });
  const runEventFeed = await startRunEventFeed({ db: database.db, log });
  const app = createApiApp({
    ctx,
    log,
    bootstrapToken: options.bootstrapToken,
    activityFeed,
    runEventFeed,
    externalToken: options.externalToken,
  });
  const workers: RunningWorker[] = [];

  return {
    database,
    app,
    ctx,
    provider,
    logLines,
    ...(headless ? { headless } : {}),
    dataDir: rootDir,
    async startWorker(options = {}) {
      const runtime = await createRuntime({
        ...shared,
        role: "worker",
        ...(options.agent ? { agentModel: options.agent.model } : {}),
      });
      const worker = await startWorker({ ...options, runtime, pollingIntervalSeconds: 0.5 });
      workers.push(worker);
      return worker;
    },
    client(token) {
      return createClient({
        baseUrl: "http://localhost",
        token,
        fetch: async (request) => app.fetch(request),
      });
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
      const json = await res.json();
      registerLogSecret(token, "a bearer token");
      registerSecretsIn(json);
      return { status: res.status, json };
    },
    async newTenant(label) {
      const tenant = await createUserWithSpace(database.db, {
        userName: label,
        spaceName: `${label}'s space`,
        botName: `${label}-bot`,
        providerKind: provider.kind,
      });
      registerLogSecret(tenant.token, `${label}'s token`);
      return tenant;
    },
    async close() {
      for (const worker of workers) await worker.stop({ timeoutMs: 5_000 });
      await activityFeed.close();
      await runEventFeed.close();
      await headless?.close();
      await api.close({ graceful: false, timeoutMs: 2_000 });
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
  const client = system.client(tenant.token);
  const { id } = await client.call("computer/create", { spaceId: tenant.spaceId, ...body });
  await eventually(async () => {
    const computer = await client.call("computer/get", { computerId: id });
    return computer.state === "running" ? true : undefined;
  });
  return id;
}
