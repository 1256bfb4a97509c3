/**
 * The API process: HTTP RPCs (and, with the screens issue, websockets). Configuration comes
 * from the environment, parsed once here; see `.env.example`.
 */
import { serve } from "@hono/node-server";
import {
  concreteProviderKind,
  homesFromEnv,
  parseRuntimeEnv,
  providerFromEnv,
  requireDatabaseUrl,
  sizingFromEnv,
} from "@rakazo/config";
import { connectDatabase, migrateDatabase } from "@rakazo/db";
import { startPgBoss } from "@rakazo/jobs";
import { createLogger } from "@rakazo/log";
import { parseScreenKeys } from "@rakazo/screens";
import { startActivityFeed, systemRunHooks } from "@rakazo/services";
import { createApiApp } from "./app.ts";

const env = parseRuntimeEnv(process.env);
const log = createLogger({ level: env.LOG_LEVEL, base: { service: "api" } });
const databaseUrl = requireDatabaseUrl(env);

await migrateDatabase(databaseUrl);
const database = connectDatabase(databaseUrl);
const { boss, queue } = await startPgBoss(databaseUrl, {
  supervise: false,
  onError: (error) => log.error("pgboss.error", { error }),
});
const provider = await providerFromEnv(env, concreteProviderKind(env));
const { homes, keys } = await homesFromEnv(env);
const activityFeed = await startActivityFeed({ db: database.db, log });
const app = createApiApp({
  ctx: {
    db: database.db,
    jobs: queue,
    provider,
    log,
    homes,
    keys,
    runHooks: systemRunHooks,
    sizing: sizingFromEnv(env),
    networkDefault: { mode: env.COMPUTER_NETWORK },
    ...(env.AGENT_MODEL ? { agentModel: env.AGENT_MODEL } : {}),
    // Crash tests (OPS-4): die between an operation's commit and its enqueue, like a kill -9.
    ...(env.RAKAZO_TEST_CRASH_AFTER === "operation-commit"
      ? { faults: { afterOperationCommit: () => process.kill(process.pid, "SIGKILL") } }
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
  },
  log,
  bootstrapToken: env.BOOTSTRAP_TOKEN,
  activityFeed,
  screenServiceToken: env.SCREEN_SERVICE_TOKEN,
  // Results are checked against their output schema in tests (strict); here a mismatch is
  // logged, not turned into a 500 after the verb has already acted (docs/decisions.md).
  outputValidation: "log",
});

const server = serve({ fetch: app.fetch, hostname: env.API_HOST, port: env.API_PORT }, (info) => {
  log.info("api.listening", { host: env.API_HOST, port: info.port, provider: provider.kind });
});

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  log.info("api.stopping", { signal });
  await new Promise<void>((done) => server.close(() => done()));
  await activityFeed.close();
  await boss.stop({ graceful: true, timeout: 10_000 });
  await database.close();
  process.exit(0);
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));
