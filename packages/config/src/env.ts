/**
 * The environment every Rakazo process reads, parsed once by each app's entry point and then
 * passed into constructors. `.env.example` at the repository root documents every variable.
 */
import { fileURLToPath } from "node:url";
import { z } from "zod";

/** `.data/` at the repository root: git-ignored, so a fresh clone starts empty. */
export const DEFAULT_DATA_DIR = fileURLToPath(new URL("../../../.data", import.meta.url));

const port = z.coerce.number().int().min(0).max(65_535);
const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === "" ? undefined : v));

export const runtimeEnvSchema = z.object({
  DATABASE_URL: optionalString,
  EMBEDDED_POSTGRES_PORT: port.default(54329),
  DATA_DIR: optionalString.transform((v) => v ?? DEFAULT_DATA_DIR),
  RAKAZO_PROVIDER: z.enum(["auto", "fake", "docker"]).default("auto"),
  RAKAZO_COMPUTER_IMAGE: z.string().default("rakazo-computer:latest"),
  DOCKER_SOCKET: z.string().default("/var/run/docker.sock"),
  SANDBOX_TEAM_SCREEN_LIMIT: z.coerce.number().int().min(0).default(0),
  // Computer sizing (issue 12): the default for new computers and the most `computer/create` may ask.
  RAKAZO_COMPUTER_MEMORY_MIB: z.coerce.number().int().min(256).default(4_096),
  RAKAZO_COMPUTER_CPUS: z.coerce.number().min(0.1).max(256).default(2),
  RAKAZO_COMPUTER_PIDS: z.coerce.number().int().min(64).default(4_096),
  RAKAZO_COMPUTER_MAX_MEMORY_MIB: z.coerce.number().int().min(256).default(16_384),
  RAKAZO_COMPUTER_MAX_CPUS: z.coerce.number().min(0.1).max(256).default(4),
  RAKAZO_COMPUTER_MAX_PIDS: z.coerce.number().int().min(64).default(16_384),
  // Network policy of new computers (issue 16): none (no network at all) | egress | allowlist.
  COMPUTER_NETWORK: z.enum(["none", "egress", "allowlist"]).default("none"),
  /** Docker: the upstream network of the per-computer egress proxies (made when missing). */
  COMPUTER_EGRESS_NETWORK: z.string().default("rakazo-egress"),
  /** Private CIDRs (comma-separated) opened to every computer's egress; the host stays refused. */
  COMPUTER_EGRESS_PRIVATE_ALLOW: z
    .string()
    .default("")
    .transform((v) =>
      v
        .split(",")
        .map((cidr) => cidr.trim())
        .filter((cidr) => cidr !== ""),
    )
    .pipe(z.array(z.cidrv4().or(z.cidrv6()))),
  API_HOST: z.string().default("127.0.0.1"),
  API_PORT: port.default(8787),
  LOG_LEVEL: z.enum(["debug", "info", "warn", "error"]).default("info"),
  BOOTSTRAP_TOKEN: optionalString,
  WORKER_POLL_SECONDS: z.coerce.number().min(0.5).default(1),
  IDLE_TIMEOUT_SECONDS: z.coerce.number().min(1).default(1_800),
  IDLE_SWEEP_SECONDS: z.coerce.number().min(0.2).default(30),
  TAKEOVER_AWAKE_SECONDS: z.coerce.number().min(1).default(1_800),
  AGENT_MODEL: optionalString,
  AGENT_MODEL_VISION: z
    .enum(["true", "false"])
    .optional()
    .transform((v) => (v === undefined ? undefined : v === "true")),
  OPENROUTER_API_KEY: optionalString,
  // `emulator` is for test runtimes, which supply the headless browser (BRW-7).
  BROWSER_PROVIDER: z.enum(["sandbox", "fake", "emulator"]).optional(),
  RECONCILE_SECONDS: z.coerce.number().min(1).default(600),
  // The operations reconciler (OPS-4/OPS-5): how often it looks, how long a queued operation
  // may wait for its job, how long past its lease a run's host may be silent.
  OPERATIONS_RECONCILE_SECONDS: z.coerce.number().min(0.2).default(15),
  OPERATION_QUEUED_GRACE_SECONDS: z.coerce.number().min(0).default(30),
  RUN_LAPSE_GRACE_SECONDS: z.coerce.number().min(0).default(30),
  // OPS-5: each worker beats every WORKER_HEARTBEAT_SECONDS; an operation whose worker is silent
  // for WORKER_SILENCE_SECONDS (ten minutes) becomes interrupted.
  WORKER_HEARTBEAT_SECONDS: z.coerce.number().min(0.2).default(30),
  WORKER_SILENCE_SECONDS: z.coerce.number().min(1).default(600),
  /** Crash tests only: the API exits (SIGKILL) right after an operation's commit. */
  RAKAZO_TEST_CRASH_AFTER: z.enum(["operation-commit"]).optional(),
  RAKAZO_MASTER_KEY: optionalString,
  OBJECT_STORAGE_BUCKET: optionalString,
  OBJECT_STORAGE_ENDPOINT: optionalString,
  OBJECT_STORAGE_REGION: optionalString,
  OBJECT_STORAGE_ACCESS_KEY_ID: optionalString,
  OBJECT_STORAGE_SECRET_ACCESS_KEY: optionalString,
  // Screens (SCR-4..SCR-7): the web service and the capability keys.
  WEB_HOST: z.string().default("127.0.0.1"),
  WEB_PORT: port.default(8788),
  /** The web service as browsers reach it; default http://WEB_HOST:WEB_PORT. */
  WEB_PUBLIC_URL: optionalString,
  /** The API as the web service reaches it; default http://API_HOST:API_PORT. */
  API_INTERNAL_URL: optionalString,
  /** Shared by web and API for the screen authority; the launcher generates one when unset. */
  SCREEN_SERVICE_TOKEN: optionalString,
  /** `kid:base64(32 bytes)`, comma-separated, newest first; the launcher generates one when unset. */
  SCREEN_CAPABILITY_KEYS: optionalString,
  /** The longest lifetime `computer/screenUrl` grants (`ttlSeconds`); longer asks are refused. */
  SCREEN_URL_MAX_TTL_SECONDS: z.coerce.number().int().min(60).max(86_400).default(86_400),
});

export type RuntimeEnv = z.infer<typeof runtimeEnvSchema>;

export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

/**
 * Parses the environment; a bad value names the variable and what was expected. An empty value
 * means unset (so `.env.example` copied as is, with its blank lines, is valid).
 */
export function parseRuntimeEnv(env: Record<string, string | undefined>): RuntimeEnv {
  const set = Object.fromEntries(Object.entries(env).filter(([, value]) => value?.trim() !== ""));
  const result = runtimeEnvSchema.safeParse(set);
  if (result.success) return result.data;
  const problems = result.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
  throw new ConfigError(`invalid environment: ${problems}`);
}

export function requireDatabaseUrl(env: RuntimeEnv): string {
  if (!env.DATABASE_URL) {
    throw new ConfigError("DATABASE_URL is not set (the launcher sets it when it starts embedded Postgres)");
  }
  return env.DATABASE_URL;
}
