/**
 * A real worker process for fault tests (kill -9): the worker app's `startWorker` on the test's
 * database and fake-provider folder. With `TEST_AGENT=stuck` it hosts agent runs with a
 * scripted model whose first tool call never returns in time, renewing the run's lease every
 * 200 ms for 1.5 s — so a kill shows as a lapsed lease within seconds (OPS-4). With
 * `TEST_PROVISION=hang` its provider's provision never returns, `TEST_HANG=destroy` its destroy,
 * `TEST_HANG=export` a workspace export — so a kill lands inside that stage of an operation.
 * `TEST_SLOW_PROVISION_MS` delays every provision, so a fault (a Postgres restart) lands inside it.
 * The worker beats its heartbeat every 200 ms (OPS-5). `TEST_SWEEP_MS` turns on the idle sweeper
 * (one hour idle timeout; tests age `last_activity_at`) and the operations reconciler (queued
 * grace 3 s) at that interval — the replica test races them across processes.
 */
import { randomBytes } from "node:crypto";
import { fauxAssistantMessage, fauxToolCall, registerFauxProvider } from "@mariozechner/pi-ai";
import { connectDatabase } from "@rakazo/db";
import { LocalAgentHomeStore, LocalKeyWrapper } from "@rakazo/homes";
import { createLogger } from "@rakazo/log";
import { createRuntime } from "@rakazo/runtime";
import { createFakeProvider, type Sandbox, type SandboxProvider } from "@rakazo/sandbox";
import { startWorker } from "@rakazo/worker/worker";

const databaseUrl = process.env.DATABASE_URL ?? "";
const rootDir = process.env.TEST_DATA_DIR ?? "";
const masterKey = randomBytes(32);
const database = connectDatabase(databaseUrl);
const faux = registerFauxProvider({ models: [{ id: "stuck", input: ["text"] }] });
faux.setResponses([
  fauxAssistantMessage(fauxToolCall("shell", { argv: ["sleep", "60"] }), { stopReason: "toolUse" }),
]);
const fake = createFakeProvider({ rootDir });
const never = () => new Promise<never>(() => {});
/** `target` with `hung` replaced by a call that never settles (and methods still bound). */
function hanging<T extends object>(
  target: T,
  hung: string | undefined,
  wrap: Record<string, (value: never) => unknown> = {},
): T {
  return new Proxy(target, {
    get(object, key) {
      if (key === hung) return never;
      const value = Reflect.get(object, key, object);
      const bound = typeof value === "function" ? value.bind(object) : value;
      return typeof key === "string" && wrap[key] ? wrap[key](bound as never) : bound;
    },
  });
}
const hang = process.env.TEST_PROVISION === "hang" ? "provision" : process.env.TEST_HANG;
const slowMs = Number(process.env.TEST_SLOW_PROVISION_MS ?? 0);
const provider: SandboxProvider = hanging(fake, hang, {
  provision:
    (provision: SandboxProvider["provision"]) =>
    async (...args: Parameters<SandboxProvider["provision"]>) => {
      await new Promise((done) => setTimeout(done, slowMs));
      return provision(...args);
    },
  sandbox: (open: (ref: string) => Sandbox) => (ref: string) =>
    hanging(open(ref), undefined, {
      files: (files: Sandbox["files"]) => hanging(files, hang === "export" ? "exportWorkspace" : undefined),
    }),
});
const runtime = await createRuntime({
  role: "worker",
  databaseUrl,
  db: database.db,
  log: createLogger({ level: "info", base: { service: "test-worker" } }),
  provider,
  homes: { store: new LocalAgentHomeStore({ dataDir: rootDir }), keys: new LocalKeyWrapper(masterKey) },
  ...(process.env.TEST_AGENT === "stuck" ? { agentModel: "faux:stuck" } : {}),
});
const sweepMs = Number(process.env.TEST_SWEEP_MS ?? 0);
await startWorker({
  runtime,
  heartbeatMs: 200,
  pollingIntervalSeconds: 0.5,
  ...(sweepMs
    ? {
        idle: { idleTimeoutMs: 3_600_000, takeoverAwakeMs: 0, sweepIntervalMs: sweepMs },
        reconciler: {
          intervalMs: sweepMs,
          queuedGraceMs: 3_000,
          runGraceMs: 60_000,
          workerSilenceMs: 600_000,
        },
      }
    : {}),
  ...(process.env.TEST_AGENT === "stuck"
    ? {
        agent: {
          model: "faux:stuck",
          resolvedModel: faux.getModel(),
          apiKeys: {},
          heartbeatMs: 200,
          leaseTtlMs: 1_500,
        },
      }
    : {}),
});
