/**
 * `./rakazo start`: the whole system on embedded defaults. `.env` at the repository root fills
 * in what the environment leaves unset. Start-up checks first (another launcher, busy ports,
 * an explicit Docker provider without engine or image), then Postgres (embedded in DATA_DIR when
 * there is no `DATABASE_URL`), migrations, and the API, worker and web as supervised children
 * sharing one resolved configuration. "Ready" is printed once all three serve. Ctrl-C or
 * `./rakazo stop` stops the children (the worker stops the running computers first), then
 * Postgres; `./rakazo stop --keep-computers` leaves the computers running.
 */
import { mkdir } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import {
  ConfigError,
  hostSupervisorBundle,
  parseRuntimeEnv,
  REMOTE_PROVIDER_KEYS,
  remoteSupervisorBundle,
} from "@rakazo/config";
import { migrateDatabase } from "@rakazo/db";
import { createLogger } from "@rakazo/log";
import { Children } from "./children.ts";
import { createConsole } from "./console.ts";
import { dockerReady } from "./docker-probe.ts";
import { loadDotEnv } from "./dotenv.ts";
import { type EmbeddedDatabase, startEmbeddedPostgres } from "./embedded-postgres.ts";
import {
  assertDockerUsable,
  assertNotRunning,
  assertPortsFree,
  type PortNeed,
  prepareHostProvider,
  prepareRemoteProvider,
} from "./preflight.ts";
import { reportOtherProviderComputers } from "./provider-switch.ts";
import { readyBanner } from "./ready.ts";
import { screenSecrets } from "./screen-secrets.ts";
import { setupCode } from "./setup-code.ts";
import { StartupError } from "./startup-error.ts";
import { type ChildName, type LauncherState, removeState, writeState } from "./state.ts";

const out = createConsole();
const dotEnv = loadDotEnv(process.env);
let env: ReturnType<typeof parseRuntimeEnv>;
try {
  env = parseRuntimeEnv(process.env);
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  process.stderr.write(`rakazo: ${error.message}\n`);
  process.exit(1);
}
const log = createLogger({ level: env.LOG_LEVEL, base: { service: "launcher" }, write: out.log });
const NAMES: readonly ChildName[] = ["api", "worker", "web"];
const PROVIDER_KEY_VARIABLES: ReadonlySet<string> = new Set(Object.values(REMOTE_PROVIDER_KEYS));

let embedded: EmbeddedDatabase | undefined;
let children: Children | undefined;
let state: LauncherState | undefined;
let stopping = false;

function saveState(change: Partial<LauncherState>): void {
  if (!state || stopping) return;
  state = { ...state, ...change };
  writeState(env.DATA_DIR, state);
}

/**
 * How long the worker may take to stop: it checkpoints and stops the running computers first
 * (apps/worker/src/worker.ts, `DEFAULT_SHUTDOWN`: no claim after 15 s), like the compose
 * worker's 30 s `stop_grace_period`. `./rakazo stop` waits longer than this.
 */
const WORKER_GRACE_MS = 30_000;

async function shutdown(
  exitCode: number,
  reason: string,
  computers: "stop" | "keep" = "stop",
): Promise<never> {
  if (stopping) return new Promise<never>(() => {});
  stopping = true;
  log.info("launcher.stopping", { reason, computers });
  // SIGTERM has the worker stop the deployment's computers; SIGUSR2 has it leave them running.
  await children?.stop({
    graceMs: (name) => (name === "worker" ? WORKER_GRACE_MS : 20_000),
    signal: (name) => (name === "worker" && computers === "keep" ? "SIGUSR2" : "SIGTERM"),
  });
  if (embedded) {
    await embedded.stop();
    embedded = undefined; // stopped: the exit hook must not signal a pid that may be reused
    log.info("postgres.stopped");
  }
  // Only our own state: a start refused because another launcher runs must leave its file.
  if (state) removeState(env.DATA_DIR);
  log.info("launcher.stopped");
  process.exit(exitCode);
}

// Whatever ends the launcher, no child or Postgres outlives it.
process.on("exit", () => {
  children?.killAll();
  if (embedded?.pid) {
    try {
      process.kill(embedded.pid, "SIGINT");
    } catch {}
  }
});
// Ctrl-C, `./rakazo stop` and a closed terminal stop the computers with the system;
// `./rakazo stop --keep-computers` sends SIGUSR2 and leaves them running.
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  process.on(signal, () => void shutdown(0, signal));
}
process.on("SIGUSR2", () => void shutdown(0, "SIGUSR2", "keep"));

async function start(): Promise<void> {
  await mkdir(env.DATA_DIR, { recursive: true });
  if (dotEnv) log.info("launcher.env_file", { path: dotEnv });
  assertNotRunning(env.DATA_DIR);
  const ports: PortNeed[] = [
    { host: env.API_HOST, port: env.API_PORT, setting: "API_PORT" },
    { host: env.WEB_HOST, port: env.WEB_PORT, setting: "WEB_PORT" },
  ];
  if (!env.DATABASE_URL) {
    ports.push({ host: "127.0.0.1", port: env.EMBEDDED_POSTGRES_PORT, setting: "EMBEDDED_POSTGRES_PORT" });
  }
  await assertPortsFree(ports);

  let provider = env.RAKAZO_PROVIDER;
  if (provider === "auto") {
    const docker = await dockerReady(env.DOCKER_SOCKET, env.RAKAZO_COMPUTER_IMAGE);
    provider = docker.ready ? "docker" : "fake";
    log.info("provider.selected", { provider, reason: docker.reason });
    // Never a silent downgrade: say what is missing for Docker and how to insist on it.
    if (!docker.ready) {
      out.say(
        `RAKAZO_PROVIDER=auto chose the fake provider: ${docker.reason}. ` +
          "Set RAKAZO_PROVIDER=docker to refuse to start without Docker.",
      );
    }
  } else {
    if (provider === "docker") await assertDockerUsable(env.DOCKER_SOCKET, env.RAKAZO_COMPUTER_IMAGE);
    // Never chosen by `auto`: computers on this machine's own user are opted into explicitly.
    if (provider === "host") prepareHostProvider(hostSupervisorBundle(env));
    // Never chosen by `auto` either: a cloud account is opted into with its key.
    if (provider in REMOTE_PROVIDER_KEYS) prepareRemoteProvider(provider, remoteSupervisorBundle(env));
    log.info("provider.selected", { provider, reason: "RAKAZO_PROVIDER" });
  }

  let databaseUrl = env.DATABASE_URL;
  if (!databaseUrl) {
    embedded = await startEmbeddedPostgres({ dataDir: env.DATA_DIR, port: env.EMBEDDED_POSTGRES_PORT, log });
    databaseUrl = embedded.url;
  } else {
    log.info("postgres.external", { embedded: false });
  }
  await migrateDatabase(databaseUrl);
  log.info("database.migrated");
  await reportOtherProviderComputers({ databaseUrl, provider, log });

  const secrets = await screenSecrets(env.DATA_DIR, {
    serviceToken: env.SCREEN_SERVICE_TOKEN,
    capabilityKeys: env.SCREEN_CAPABILITY_KEYS,
  });
  // Without a bootstrap token, setup from another machine needs this code (the API checks it).
  const setup = env.BOOTSTRAP_TOKEN ? undefined : await setupCode(env.DATA_DIR, env.RAKAZO_SETUP_CODE);
  const api = `http://${env.API_HOST}:${env.API_PORT}`;
  const web = env.WEB_PUBLIC_URL ?? `http://${env.WEB_HOST}:${env.WEB_PORT}`;
  state = {
    pid: process.pid,
    startedAt: new Date().toISOString(),
    provider,
    api: { url: api, port: env.API_PORT },
    web: { url: web, port: env.WEB_PORT },
    ...(embedded ? { postgres: { pid: embedded.pid, port: embedded.port } } : {}),
    children: {},
    ready: false,
  };
  writeState(env.DATA_DIR, state);

  const ready = new Set<ChildName>();
  const childEnv = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    RAKAZO_PROVIDER: provider,
    SCREEN_SERVICE_TOKEN: secrets.serviceToken,
    SCREEN_CAPABILITY_KEYS: secrets.capabilityKeys,
    DATA_DIR: env.DATA_DIR,
    ...(setup ? { RAKAZO_SETUP_CODE: setup } : {}),
  };
  // Cloud provider keys are read by API and worker only: the browser-facing web process never
  // holds one, so nothing it serves or logs can carry it.
  const webEnv = Object.fromEntries(
    Object.entries(childEnv).filter(
      ([name]) => !PROVIDER_KEY_VARIABLES.has(name) && name !== "RAKAZO_SETUP_CODE",
    ),
  );
  children = new Children({
    entry: (name) => fileURLToPath(new URL(`../../${name}/src/main.ts`, import.meta.url)),
    env: (name) => (name === "web" ? webEnv : childEnv),
    log,
    console: out,
    events: {
      started: (name, pid) => saveState({ children: { ...state?.children, [name]: pid } }),
      ready: (name, restarts) => {
        if (restarts > 0) log.info("launcher.child_back", { child: name, restarts });
        if (ready.has(name)) return;
        ready.add(name);
        if (ready.size < NAMES.length) return;
        saveState({ ready: true });
        log.info("launcher.ready", { api, web, provider, dataDir: env.DATA_DIR, next: "./rakazo status" });
        out.say(readyBanner({ api, web, provider, dataDir: env.DATA_DIR, setupCode: setup }));
      },
      gaveUp: (name, crashes, windowMs) => {
        process.stderr.write(
          `rakazo: the ${name} crashed ${crashes} times in ${windowMs / 1_000} s; stopping Rakazo. ` +
            "Its error lines are above.\n",
        );
        void shutdown(1, `${name} keeps crashing`);
      },
    },
  });
  for (const name of NAMES) children.start(name);
}

try {
  await start();
} catch (error) {
  const message = error instanceof StartupError ? error.message : undefined;
  if (message) {
    log.error("launcher.cannot_start", { reason: message });
    process.stderr.write(`rakazo: cannot start: ${message}\n`);
  } else {
    log.error("launcher.failed", { error });
  }
  await shutdown(1, "start-up failed");
}
