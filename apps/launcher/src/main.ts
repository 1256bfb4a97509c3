/**
 * `./rakazo start`: the whole system on embedded defaults. No `DATABASE_URL` → embedded
 * Postgres in DATA_DIR; `RAKAZO_PROVIDER=auto` → Docker if usable, else the fake provider.
 * Then migrations, then the API and the worker as child processes sharing one resolved
 * configuration. Ctrl-C stops everything in order.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdir } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { parseRuntimeEnv } from "@rakazo/config";
import { migrateDatabase } from "@rakazo/db";
import { createLogger } from "@rakazo/log";
import { dockerReady } from "./docker-probe.ts";
import { type EmbeddedDatabase, startEmbeddedPostgres } from "./embedded-postgres.ts";
import { screenSecrets } from "./screen-secrets.ts";

const env = parseRuntimeEnv(process.env);
const log = createLogger({ level: env.LOG_LEVEL, base: { service: "launcher" } });

await mkdir(env.DATA_DIR, { recursive: true });

let embedded: EmbeddedDatabase | undefined;
let databaseUrl = env.DATABASE_URL;
if (!databaseUrl) {
  embedded = await startEmbeddedPostgres({ dataDir: env.DATA_DIR, port: env.EMBEDDED_POSTGRES_PORT, log });
  databaseUrl = embedded.url;
} else {
  log.info("postgres.external", { embedded: false });
}
await migrateDatabase(databaseUrl);
log.info("database.migrated");

let provider = env.RAKAZO_PROVIDER;
if (provider === "auto") {
  const docker = await dockerReady(env.DOCKER_SOCKET, env.RAKAZO_COMPUTER_IMAGE);
  provider = docker.ready ? "docker" : "fake";
  log.info("provider.selected", { provider, reason: docker.reason });
} else {
  log.info("provider.selected", { provider, reason: "RAKAZO_PROVIDER" });
}

const secrets = await screenSecrets(env.DATA_DIR, {
  serviceToken: env.SCREEN_SERVICE_TOKEN,
  capabilityKeys: env.SCREEN_CAPABILITY_KEYS,
});
const childEnv = {
  ...process.env,
  DATABASE_URL: databaseUrl,
  RAKAZO_PROVIDER: provider,
  SCREEN_SERVICE_TOKEN: secrets.serviceToken,
  SCREEN_CAPABILITY_KEYS: secrets.capabilityKeys,
  DATA_DIR: env.DATA_DIR,
};
const children = new Map<string, ChildProcess>();
let stopping = false;

function startChild(name: "api" | "worker" | "web"): void {
  const entry = fileURLToPath(new URL(`../../${name}/src/main.ts`, import.meta.url));
  const child = spawn(process.execPath, [entry], { env: childEnv, stdio: "inherit" });
  children.set(name, child);
  child.on("exit", (code, signal) => {
    children.delete(name);
    if (!stopping) {
      log.error("launcher.child_exited", { child: name, code, signal });
      void shutdown(1);
    }
  });
}

async function shutdown(exitCode: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  log.info("launcher.stopping");
  const exits = [...children.values()].map(
    (child) =>
      new Promise<void>((done) => (child.exitCode !== null ? done() : child.once("exit", () => done()))),
  );
  for (const child of children.values()) child.kill("SIGTERM");
  await Promise.all(exits);
  if (embedded) await embedded.stop();
  log.info("launcher.stopped");
  process.exit(exitCode);
}

process.on("SIGINT", () => void shutdown(0));
process.on("SIGTERM", () => void shutdown(0));

startChild("api");
startChild("worker");
startChild("web");
log.info("launcher.started", {
  api: `http://${env.API_HOST}:${env.API_PORT}`,
  web: env.WEB_PUBLIC_URL ?? `http://${env.WEB_HOST}:${env.WEB_PORT}`,
  provider,
  dataDir: env.DATA_DIR,
});
