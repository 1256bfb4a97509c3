/** The worker process: durable pg-boss jobs, the reconciler, and (with a model) agents' Pi sessions. */
import { writeFile } from "node:fs/promises";
import { parseWorkerEnv } from "@rakazo/config";
import { createLogger } from "@rakazo/log";
import { createRuntime, runtimeConfigFromEnv } from "@rakazo/runtime";
import { startOperatorListener } from "./operator-listener.ts";
import { startWorker } from "./worker.ts";

const env = parseWorkerEnv(process.env);
const log = createLogger({ level: env.LOG_LEVEL, base: { service: "worker" } });
if (env.BROWSER_PROVIDER === "emulator") {
  // A test runtime starts its own headless Chromium and passes it in; a deployed worker has none.
  throw new Error("BROWSER_PROVIDER=emulator is for test runtimes only; use sandbox or fake");
}
const runtime = await createRuntime(runtimeConfigFromEnv(env, { role: "worker", log }));
const worker = await startWorker({
  runtime,
  reconcileIntervalMs: env.RECONCILE_SECONDS * 1_000,
  reconciler: {
    intervalMs: env.OPERATIONS_RECONCILE_SECONDS * 1_000,
    queuedGraceMs: env.OPERATION_QUEUED_GRACE_SECONDS * 1_000,
    runGraceMs: env.RUN_LAPSE_GRACE_SECONDS * 1_000,
    workerSilenceMs: env.WORKER_SILENCE_SECONDS * 1_000,
  },
  heartbeatMs: env.WORKER_HEARTBEAT_SECONDS * 1_000,
  ...(env.WORKER_HEALTH_FILE ? { onHeartbeat: touch(env.WORKER_HEALTH_FILE) } : {}),
  ...(env.AGENT_MODEL
    ? {
        agent: {
          model: env.AGENT_MODEL,
          ...(env.AGENT_MODEL_VISION !== undefined ? { vision: env.AGENT_MODEL_VISION } : {}),
          apiKeys: { openrouter: env.OPENROUTER_API_KEY },
          ...(env.BROWSER_PROVIDER ? { browser: env.BROWSER_PROVIDER } : {}),
        },
      }
    : {}),
  pollingIntervalSeconds: env.WORKER_POLL_SECONDS,
  idle: {
    idleTimeoutMs: env.IDLE_TIMEOUT_SECONDS * 1_000,
    takeoverAwakeMs: env.TAKEOVER_AWAKE_SECONDS * 1_000,
    sweepIntervalMs: env.IDLE_SWEEP_SECONDS * 1_000,
  },
});

// The operator's scraper and probes (`/metrics`, `/ready`), only when a port is configured.
const operatorListener =
  env.WORKER_METRICS_PORT === undefined
    ? undefined
    : await startOperatorListener({
        db: runtime.ctx.db,
        log,
        host: env.WORKER_METRICS_HOST,
        port: env.WORKER_METRICS_PORT,
        token: env.RAKAZO_METRICS_TOKEN,
      });

/** The healthcheck's file: its mtime is the last heartbeat Postgres accepted. */
function touch(file: string): () => Promise<void> {
  return () => writeFile(file, `${new Date().toISOString()}\n`);
}

/**
 * SIGTERM (`docker compose stop/down`, the launcher's stop and Ctrl-C) and SIGINT stop the
 * deployment's running computers with the control plane; SIGUSR2 (`./rakazo stop
 * --keep-computers`) leaves them running.
 */
let stopping = false;
async function shutdown(signal: string, computers: "stop" | "keep"): Promise<void> {
  if (stopping) return;
  stopping = true;
  log.info("worker.stopping", { signal, computers });
  await worker.stop({ computers });
  await operatorListener?.close();
  process.exit(0);
}
process.on("SIGTERM", () => void shutdown("SIGTERM", "stop"));
process.on("SIGINT", () => void shutdown("SIGINT", "stop"));
process.on("SIGUSR2", () => void shutdown("SIGUSR2", "keep"));
