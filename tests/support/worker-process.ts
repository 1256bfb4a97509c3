/**
 * A real worker process for fault tests (kill -9): the worker app's `startWorker` on the test's
 * database and fake-provider folder. With `TEST_AGENT=stuck` it hosts agent runs with a
 * scripted model whose first tool call never returns in time, renewing the run's lease every
 * 200 ms for 1.5 s — so a kill shows as a lapsed lease within seconds (OPS-4). With
 * `TEST_PROVISION=hang` its provider's provision never returns, so a kill lands mid-operation.
 * The worker beats its heartbeat every 200 ms (OPS-5).
 */
import { randomBytes } from "node:crypto";
import { fauxAssistantMessage, fauxToolCall, registerFauxProvider } from "@mariozechner/pi-ai";
import { connectDatabase } from "@rakazo/db";
import { LocalAgentHomeStore, LocalKeyWrapper } from "@rakazo/homes";
import { createLogger } from "@rakazo/log";
import { createFakeProvider, type SandboxProvider } from "@rakazo/sandbox";
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
const provider: SandboxProvider =
  process.env.TEST_PROVISION === "hang"
    ? new Proxy(fake, {
        get(target, key) {
          if (key === "provision") return () => new Promise<never>(() => {});
          const value = Reflect.get(target, key, target);
          return typeof value === "function" ? value.bind(target) : value;
        },
      })
    : fake;
await startWorker({
  heartbeatMs: 200,
  databaseUrl,
  db: database.db,
  provider,
  homes: new LocalAgentHomeStore({ dataDir: rootDir }),
  keys: new LocalKeyWrapper(masterKey),
  log: createLogger({ level: "info", base: { service: "test-worker" } }),
  pollingIntervalSeconds: 0.5,
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
