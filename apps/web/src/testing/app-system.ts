/**
 * The whole product for the web app's browser tests: real Postgres, the API over real
 * HTTP (screen authority, live activity stream), a worker, the web service with the built app and
 * sessions, and the given provider (a real Docker computer in app.docker.test.ts). Logs of every
 * part are captured in `logLines`.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import type http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serve } from "@hono/node-server";
import { createApiApp } from "@rakazo/api/app";
import { createClient, type RakazoClient } from "@rakazo/client";
import type { Database } from "@rakazo/db";
import { createTestDatabase } from "@rakazo/db/testing";
import { LocalAgentHomeStore, LocalKeyWrapper } from "@rakazo/homes";
import { createLogger } from "@rakazo/log";
import { registerLogSecret } from "@rakazo/log/testing";
import { createRuntime, type RuntimeConfig } from "@rakazo/runtime";
import type { SandboxProvider } from "@rakazo/sandbox";
import { generateScreenKeys, parseScreenKeys } from "@rakazo/screens";
import { startActivityFeed, startRunEventFeed } from "@rakazo/services";
import { type RunningWorker, startWorker } from "@rakazo/worker/worker";
import { createAuthorityClient } from "../authority.ts";
import { startWebServer, type WebServer } from "../server.ts";

export interface AppSystem {
  readonly web: WebServer;
  readonly apiUrl: string;
  readonly provider: SandboxProvider;
  readonly logLines: string[];
  readonly db: Database;
  client(token: string): RakazoClient;
  /** Stops the web service and starts a fresh one on the same address (nothing kept in memory). */
  restartWeb(): Promise<void>;
  close(): Promise<void>;
}

export async function startAppSystem(options: {
  provider: (dataDir: string) => Promise<SandboxProvider>;
  bootstrapToken?: string;
  /** The launcher's one-time setup code (RAKAZO_SETUP_CODE), for setup from another machine. */
  setupCode?: string;
  /** WEB_PUBLIC_URL: browsers reach the web service there (a TLS proxy's https URL). */
  webPublicUrl?: string;
  /** Agent runs: the API's `AGENT_MODEL` and the worker's host (a scripted model in tests). */
  agent?: NonNullable<Parameters<typeof startWorker>[0]["agent"]>;
}): Promise<AppSystem> {
  const database = await createTestDatabase();
  const dataDir = await mkdtemp(join(tmpdir(), "rakazo-webapp-"));
  const logLines: string[] = [];
  const log = createLogger({ level: "debug", write: (line) => logLines.push(line) });
  const provider = await options.provider(dataDir);
  const keys = generateScreenKeys("k1");
  const serviceToken = `svc_${randomBytes(16).toString("hex")}`;
  registerLogSecret(keys.slice(keys.indexOf(":") + 1), "the screen master key");
  registerLogSecret(serviceToken, "the screen service token");
  registerLogSecret(options.bootstrapToken, "the bootstrap token");
  registerLogSecret(options.setupCode, "the setup code");
  const masterKey = randomBytes(32);
  const screens = { keyring: parseScreenKeys(keys), webBaseUrl: "http://127.0.0.1:0" };
  const shared: Omit<RuntimeConfig, "role"> = {
    databaseUrl: database.url,
    db: database.db,
    log,
    provider,
    homes: { store: new LocalAgentHomeStore({ dataDir }), keys: new LocalKeyWrapper(masterKey) },
    screens,
  };
  const runtime = await createRuntime({
    ...shared,
    role: "api",
    ...(options.agent ? { agentModel: options.agent.model } : {}),
  });
  const activityFeed = await startActivityFeed({ db: database.db, log });
  const runEventFeed = await startRunEventFeed({ db: database.db, log });
  const app = createApiApp({
    ctx: runtime.ctx,
    log,
    screenServiceToken: serviceToken,
    activityFeed,
    runEventFeed,
    bootstrapToken: options.bootstrapToken,
    setupCode: options.setupCode,
  });
  const api = await new Promise<http.Server>((resolve) => {
    const s = serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0 }, () => resolve(s as http.Server));
  });
  const apiUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
  const workerRuntime = await createRuntime({ ...shared, role: "worker" });
  const worker: RunningWorker = await startWorker({
    runtime: workerRuntime,
    pollingIntervalSeconds: 0.5,
    ...(options.agent ? { agent: options.agent } : {}),
  });
  const startWeb = (port: number) =>
    startWebServer({
      authority: createAuthorityClient({ apiUrl, serviceToken }),
      log: log.child({ service: "web" }),
      host: "127.0.0.1",
      port,
      apiUrl,
      publicUrl: options.webPublicUrl,
      sessionSecret: serviceToken,
    });
  let web = await startWeb(0);
  screens.webBaseUrl = options.webPublicUrl ?? web.url;
  return {
    get web() {
      return web;
    },
    async restartWeb() {
      await web.close();
      web = await startWeb(Number(new URL(web.url).port));
    },
    apiUrl,
    provider,
    logLines,
    db: database.db,
    client: (token) => createClient({ baseUrl: apiUrl, token }),
    async close() {
      await web.close();
      await worker.stop({ timeoutMs: 5_000 });
      await activityFeed.close();
      await runEventFeed.close();
      api.closeAllConnections();
      await new Promise<void>((resolve) => api.close(() => resolve()));
      await runtime.close({ graceful: false, timeoutMs: 2_000 });
      await database.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
