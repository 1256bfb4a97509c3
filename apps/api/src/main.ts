/**
 * The API process: HTTP RPCs (and, with the screens issue, websockets). Configuration comes
 * from the environment, parsed once here; see `.env.example`.
 */
import { serve } from "@hono/node-server";
import { parseApiEnv } from "@rakazo/config";
import { hostnamesOf } from "@rakazo/http-edge";
import { createLogger } from "@rakazo/log";
import { createRuntime, runtimeConfigFromEnv } from "@rakazo/runtime";
import { parseScreenKeys } from "@rakazo/screens";
import { startActivityFeed, startRunEventFeed } from "@rakazo/services";
import { createApiApp } from "./app.ts";

const env = parseApiEnv(process.env);
const bracketed = (host: string) => (host.includes(":") ? `[${host}]` : host);
const log = createLogger({ level: env.LOG_LEVEL, base: { service: "api" } });
const runtime = await createRuntime({
  ...runtimeConfigFromEnv(env, { role: "api", log }),
  // Crash tests (OPS-4): die between an operation's (or agent run's) commit and its enqueue, like a kill -9.
  ...(env.RAKAZO_TEST_CRASH_AFTER === "operation-commit"
    ? { faults: { afterOperationCommit: () => process.kill(process.pid, "SIGKILL") } }
    : {}),
  ...(env.RAKAZO_TEST_CRASH_AFTER === "run-commit"
    ? { faults: { afterRunCommit: () => process.kill(process.pid, "SIGKILL") } }
    : {}),
  // Screens (SCR-2/4): capabilities sealed with these keys, handed out as web-service URLs.
  ...(env.SCREEN_CAPABILITY_KEYS
    ? {
        screens: {
          keyring: parseScreenKeys(env.SCREEN_CAPABILITY_KEYS),
          webBaseUrl: env.WEB_PUBLIC_URL ?? `http://${env.WEB_HOST}:${env.WEB_PORT}`,
          maxTtlMs: env.SCREEN_URL_MAX_TTL_SECONDS * 1000,
        },
      }
    : {}),
});
const { ctx } = runtime;
const activityFeed = await startActivityFeed({ db: ctx.db, log });
const runEventFeed = await startRunEventFeed({ db: ctx.db, log });
const app = createApiApp({
  ctx,
  log,
  bootstrapToken: env.BOOTSTRAP_TOKEN,
  setupCode: env.RAKAZO_SETUP_CODE,
  // Loopback names always; a bind address other than a wildcard is a name callers use too.
  allowedHosts: [...env.RAKAZO_ALLOWED_HOSTS, ...hostnamesOf([`http://${bracketed(env.API_HOST)}`])],
  activityFeed,
  runEventFeed,
  screenServiceToken: env.SCREEN_SERVICE_TOKEN,
  externalToken: env.EXTERNAL_COMPUTER_TOKEN,
  metricsToken: env.RAKAZO_METRICS_TOKEN,
  // Results are checked against their output schema in tests (strict); here a mismatch is
  // logged, not turned into a 500 after the verb has already acted (docs/decisions.md).
  outputValidation: "log",
});

const server = serve({ fetch: app.fetch, hostname: env.API_HOST, port: env.API_PORT }, (info) => {
  log.info("api.listening", { host: env.API_HOST, port: info.port, provider: ctx.provider.kind });
});

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  log.info("api.stopping", { signal });
  await new Promise<void>((done) => server.close(() => done()));
  await activityFeed.close();
  await runEventFeed.close();
  await runtime.close({ graceful: true, timeoutMs: 10_000 });
  process.exit(0);
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));
