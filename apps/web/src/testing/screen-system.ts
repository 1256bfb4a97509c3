/**
 * A whole screen path for tests: real Postgres, the API (with the screen authority) over real
 * HTTP, the web service, and computers whose desktops and gateway are served by either the real
 * supervisor daemon on this host (`hostDaemonProvider`) or real Docker computers. Every log
 * line of API and web is captured in `logLines`.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import type http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serve } from "@hono/node-server";
import { createApiApp } from "@rakazo/api/app";
import { computers } from "@rakazo/db";
import { createTestDatabase, type TestDatabase } from "@rakazo/db/testing";
import { LocalAgentHomeStore, LocalKeyWrapper } from "@rakazo/homes";
import { createLogger } from "@rakazo/log";
import { registerLogSecret, registerSecretsIn } from "@rakazo/log/testing";
import { createRuntime } from "@rakazo/runtime";
import type { SandboxProvider } from "@rakazo/sandbox";
import { generateScreenKeys, parseScreenKeys, type ScreenKeyring } from "@rakazo/screens";
import { createUserWithSpace, type ServiceContext } from "@rakazo/services";
import { eq } from "drizzle-orm";
import { createAuthorityClient, type ScreenAuthority } from "../authority.ts";
import { startWebServer, type WebServer } from "../server.ts";

export interface ScreenSystem {
  readonly ctx: ServiceContext;
  readonly keyring: ScreenKeyring;
  readonly web: WebServer;
  readonly apiUrl: string;
  readonly serviceToken: string;
  readonly logLines: string[];
  rpc(name: string, body: unknown, token: string): Promise<{ status: number; json: any }>;
  tenant(label: string): Promise<{ userId: string; spaceId: string; botId: string; token: string }>;
  runningComputer(spaceId: string, token: string): Promise<string>;
  close(): Promise<void>;
}

export async function startScreenSystem(options: {
  provider: SandboxProvider;
  /** Overrides the authority the web service asks (tests of SCR-6 reasons). */
  authority?: (real: ScreenAuthority) => ScreenAuthority;
}): Promise<ScreenSystem> {
  const database: TestDatabase = await createTestDatabase();
  const logLines: string[] = [];
  const log = createLogger({ level: "debug", write: (line) => logLines.push(line) });
  const keys = generateScreenKeys("k1");
  const keyring = parseScreenKeys(keys);
  const serviceToken = `svc_${crypto.randomUUID().replaceAll("-", "")}`;
  registerLogSecret(keys.slice(keys.indexOf(":") + 1), "the screen master key");
  registerLogSecret(serviceToken, "the screen service token");
  const dataDir = await mkdtemp(join(tmpdir(), "rakazo-screens-"));
  // The API's composition root; the web base URL is known once the web service listens.
  const screens = { keyring, webBaseUrl: "http://127.0.0.1:0" };
  const runtime = await createRuntime({
    role: "api",
    databaseUrl: database.url,
    db: database.db,
    log,
    provider: options.provider,
    homes: { store: new LocalAgentHomeStore({ dataDir }), keys: new LocalKeyWrapper(randomBytes(32)) },
    screens,
  });
  const { ctx } = runtime;
  const app = createApiApp({ ctx, log, screenServiceToken: serviceToken });
  const api = await new Promise<http.Server>((resolve) => {
    const s = serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0 }, () => resolve(s as http.Server));
  });
  const apiUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
  const real = createAuthorityClient({ apiUrl, serviceToken });
  const web = await startWebServer({
    authority: options.authority ? options.authority(real) : real,
    log: log.child({ service: "web" }),
    host: "127.0.0.1",
    port: 0,
  });
  screens.webBaseUrl = web.url;
  const rpc = async (name: string, body: unknown, token: string) => {
    const res = await fetch(`${apiUrl}/rpc/${name}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify(body),
    });
    const json = (await res.json()) as any;
    registerLogSecret(token, "a bearer token");
    registerSecretsIn(json);
    return { status: res.status, json };
  };
  return {
    ctx,
    keyring,
    web,
    apiUrl,
    serviceToken,
    logLines,
    rpc,
    async tenant(label) {
      const tenant = await createUserWithSpace(database.db, {
        userName: label,
        spaceName: `${label}'s space`,
        botName: `${label}-bot`,
        providerKind: options.provider.kind,
      });
      registerLogSecret(tenant.token, `${label}'s token`);
      return tenant;
    },
    async runningComputer(spaceId, token) {
      const created = await rpc("computer/create", { spaceId }, token);
      if (created.status !== 200) throw new Error(`computer/create: ${JSON.stringify(created.json)}`);
      const id: string = created.json.result.id;
      // Provisioned here rather than by a worker: these tests are about screens, not lifecycle.
      const [row] = await database.db.select().from(computers).where(eq(computers.id, id));
      if (!row) throw new Error(`computer ${id} missing`);
      const { ref } = await options.provider.provision({
        computerId: id,
        mode: row.mode,
        homeKey: row.homeKey,
      });
      await database.db
        .update(computers)
        .set({ state: "running", providerRef: ref, providerKind: options.provider.kind })
        .where(eq(computers.id, id));
      return id;
    },
    async close() {
      await web.close();
      api.closeAllConnections();
      await new Promise<void>((resolve) => api.close(() => resolve()));
      await runtime.close({ graceful: false, timeoutMs: 2_000 });
      await database.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Chromium for tests: the system binary, never a download (the machines here are offline). */
export const CHROMIUM = {
  executablePath: "/usr/bin/chromium",
  args: [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
  ],
};

/** What a test page on the desktop looks like: a green page with a focused, caret-less field. */
export const GREEN_PAGE =
  'data:text/html,<body style="background:rgb(18,171,52);margin:0"><input autofocus style="caret-color:transparent;font-size:48px;margin:60px;width:600px">';
