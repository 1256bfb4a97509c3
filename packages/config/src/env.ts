/**
 * The environment of every Rakazo process, as slices: each app parses only its own
 * (`parseApiEnv`, `parseWorkerEnv`, `parseWebEnv`; the launcher, which checks everything before
 * it starts the others, `parseRuntimeEnv`) and passes the result into constructors. This
 * package only parses: stores and providers are built by `createRuntime` (@rakazo/runtime).
 * `.env.example` at the repository root documents every variable.
 */
import { createHash } from "node:crypto";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { missingProviderKey, providerEnvShape } from "./providers.ts";
import { optionalString, optionalUrl } from "./values.ts";

/** `.data/` at the repository root: git-ignored, so a fresh clone starts empty. */
export const DEFAULT_DATA_DIR = fileURLToPath(new URL("../../../.data", import.meta.url));

const port = z.coerce.number().int().min(0).max(65_535);

/** What every process that touches state reads. */
const coreShape = {
  DATABASE_URL: optionalString,
  DATA_DIR: optionalString.transform((v) => v ?? DEFAULT_DATA_DIR),
  LOG_LEVEL: z.enum(["debug", "info", "warn", "error"]).default("info"),
};

/**
 * A selected cloud provider without its key is refused at parse time, naming the variable
 * (`missingProviderKey`, ./providers.ts).
 */
function requireSelectedProviderKey(env: { RAKAZO_PROVIDER: string }, ctx: z.RefinementCtx): void {
  const missing = missingProviderKey(env, env.RAKAZO_PROVIDER);
  if (missing) ctx.addIssue({ code: "custom", path: [missing.variable], message: missing.message });
}

/** The computers of every provider: screens, sizes, quotas and network policy. */
const computerShape = {
  SANDBOX_TEAM_SCREEN_LIMIT: z.coerce.number().int().min(0).default(0),
  // Computer sizing: the default for new computers and the most `computer/create` may ask.
  RAKAZO_COMPUTER_MEMORY_MIB: z.coerce.number().int().min(256).default(4_096),
  RAKAZO_COMPUTER_CPUS: z.coerce.number().min(0.1).max(256).default(2),
  RAKAZO_COMPUTER_PIDS: z.coerce.number().int().min(64).default(4_096),
  RAKAZO_COMPUTER_MAX_MEMORY_MIB: z.coerce.number().int().min(256).default(16_384),
  RAKAZO_COMPUTER_MAX_CPUS: z.coerce.number().min(0.1).max(256).default(4),
  RAKAZO_COMPUTER_MAX_PIDS: z.coerce.number().int().min(64).default(16_384),
  // The home's disk (Docker where it keeps home disks, RAKAZO_DOCKER_HOME_DISKS: a filesystem of this size).
  RAKAZO_COMPUTER_DISK_MIB: z.coerce.number().int().min(64).default(10_240),
  RAKAZO_COMPUTER_MAX_DISK_MIB: z.coerce.number().int().min(64).default(102_400),
  // Per-space quotas: computers not deleted, and memory and CPUs of the computers holding a
  // machine. Unset: 20 computers, eight default-sized computers' memory and CPUs (at least one
  // computer of the maximum size); 0: no limit (`spaceQuotasFromEnv`).
  RAKAZO_SPACE_MAX_COMPUTERS: z.coerce.number().int().min(0).optional(),
  RAKAZO_SPACE_MAX_MEMORY_MIB: z.coerce.number().int().min(0).optional(),
  RAKAZO_SPACE_MAX_CPUS: z.coerce.number().min(0).optional(),
  // Desktop admission inside each computer (CMP-5), handed to its supervisor; unset keeps the
  // supervisor's default (180 MiB and 160 pids per desktop, 160 MiB and 128 pids kept free, CPU
  // pressure ignored).
  RAKAZO_DESKTOP_MEMORY_MIB: z.coerce.number().int().min(1).optional(),
  RAKAZO_DESKTOP_PIDS: z.coerce.number().int().min(0).optional(),
  RAKAZO_DESKTOP_FLOOR_MEMORY_MIB: z.coerce.number().int().min(1).optional(),
  RAKAZO_DESKTOP_FLOOR_PIDS: z.coerce.number().int().min(0).optional(),
  RAKAZO_DESKTOP_CPU_PRESSURE_MAX: z.coerce.number().int().min(0).max(100).optional(),
  // Network policy of new computers: none (no network at all) | egress | allowlist.
  COMPUTER_NETWORK: z.enum(["none", "egress", "allowlist"]).default("none"),
};

/**
 * The computer backend and its deployment sizes (API and worker build the same provider): each
 * kind's own variables come from the provider table (./providers.ts).
 */
const providerShape = { ...providerEnvShape, ...computerShape };

/** What every kind's settings in the provider table may read besides its own variables. */
export type ProviderBaseEnv = Pick<
  z.infer<z.ZodObject<typeof coreShape & typeof computerShape>>,
  | "DATA_DIR"
  | "SANDBOX_TEAM_SCREEN_LIMIT"
  | "RAKAZO_COMPUTER_MEMORY_MIB"
  | "RAKAZO_COMPUTER_CPUS"
  | "RAKAZO_COMPUTER_PIDS"
  | "RAKAZO_COMPUTER_DISK_MIB"
  | "RAKAZO_DESKTOP_MEMORY_MIB"
  | "RAKAZO_DESKTOP_PIDS"
  | "RAKAZO_DESKTOP_FLOOR_MEMORY_MIB"
  | "RAKAZO_DESKTOP_FLOOR_PIDS"
  | "RAKAZO_DESKTOP_CPU_PRESSURE_MAX"
>;

/** Where workspaces are checkpointed and the key that seals them (PER-3/4/5). */
const homesShape = {
  RAKAZO_MASTER_KEY: optionalString,
  OBJECT_STORAGE_BUCKET: optionalString,
  OBJECT_STORAGE_ENDPOINT: optionalString,
  OBJECT_STORAGE_REGION: optionalString,
  OBJECT_STORAGE_ACCESS_KEY_ID: optionalString,
  OBJECT_STORAGE_SECRET_ACCESS_KEY: optionalString,
};

const apiAddressShape = {
  API_HOST: z.string().default("127.0.0.1"),
  API_PORT: port.default(8787),
};

const webAddressShape = {
  WEB_HOST: z.string().default("127.0.0.1"),
  WEB_PORT: port.default(8788),
  /**
   * The web service as browsers reach it; default http://WEB_HOST:WEB_PORT. Behind a TLS proxy
   * its https origin is the one the web app's sessions accept, with a Secure cookie.
   */
  WEB_PUBLIC_URL: optionalUrl.refine((v) => v === undefined || /^https?:\/\//i.test(v), {
    message: "WEB_PUBLIC_URL must be an http:// or https:// URL",
  }),
};

/**
 * Host names the API and the web service answer to besides loopback ones and their configured
 * URLs (comma-separated; ports ignored), e.g. the name a reverse proxy or another container
 * uses. A request naming any other Host is refused (DNS rebinding).
 */
const allowedHostsShape = {
  RAKAZO_ALLOWED_HOSTS: optionalString.transform((v) =>
    (v ?? "")
      .split(",")
      .map((name) => name.trim().toLowerCase())
      .filter((name) => name !== ""),
  ),
};

/** Shared by web and API for the screen authority; the launcher generates one when unset. */
const screenServiceShape = { SCREEN_SERVICE_TOKEN: optionalString };

const agentModelShape = { AGENT_MODEL: optionalString };

/** `/metrics` answers this machine, or a scraper with this bearer token (docs/self-hosting.md). */
const metricsShape = {
  RAKAZO_METRICS_TOKEN: optionalString.refine((v) => v === undefined || v.length >= 32, {
    message: "RAKAZO_METRICS_TOKEN must be at least 32 characters",
  }),
};

export const apiEnvSchema = z
  .object({
    ...coreShape,
    ...providerShape,
    ...homesShape,
    ...apiAddressShape,
    ...webAddressShape,
    ...screenServiceShape,
    ...agentModelShape,
    ...allowedHostsShape,
    ...metricsShape,
    BOOTSTRAP_TOKEN: optionalString,
    /**
     * Without BOOTSTRAP_TOKEN, first-run setup from another machine needs this one-time code as
     * its bearer token; setup from this machine needs none. The launcher makes one when unset.
     */
    RAKAZO_SETUP_CODE: optionalString,
    /**
     * Enables the external computer surface (`external/*` RPCs) for programs outside
     * the app, such as `apps/bridge`; at least 32 characters. Unset, the surface does not exist.
     */
    EXTERNAL_COMPUTER_TOKEN: optionalString.refine((v) => v === undefined || v.length >= 32, {
      message: "EXTERNAL_COMPUTER_TOKEN must be at least 32 characters",
    }),
    /** `kid:base64(32 bytes)`, comma-separated, newest first; the launcher generates one when unset. */
    SCREEN_CAPABILITY_KEYS: optionalString,
    /** The longest lifetime `computer/screenUrl` grants (`ttlSeconds`); longer asks are refused. */
    SCREEN_URL_MAX_TTL_SECONDS: z.coerce.number().int().min(60).max(86_400).default(86_400),
    /** Crash tests only: the API exits (SIGKILL) right after an operation's (or agent run's) commit. */
    RAKAZO_TEST_CRASH_AFTER: z.enum(["operation-commit", "run-commit"]).optional(),
  })
  .superRefine(requireSelectedProviderKey);

export const workerEnvSchema = z
  .object({
    ...coreShape,
    ...providerShape,
    ...homesShape,
    ...agentModelShape,
    WORKER_POLL_SECONDS: z.coerce.number().min(0.5).default(1),
    IDLE_TIMEOUT_SECONDS: z.coerce.number().min(1).default(1_800),
    IDLE_SWEEP_SECONDS: z.coerce.number().min(0.2).default(30),
    TAKEOVER_AWAKE_SECONDS: z.coerce.number().min(1).default(1_800),
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
    /** Touched after each recorded heartbeat: a container healthcheck reads its age. */
    WORKER_HEALTH_FILE: optionalString,
    ...metricsShape,
    /** With a port, the worker serves `/metrics` and `/ready` there; unset, it listens nowhere. */
    WORKER_METRICS_PORT: port.optional(),
    WORKER_METRICS_HOST: z.string().default("127.0.0.1"),
  })
  .superRefine(requireSelectedProviderKey);

export const webEnvSchema = z.object({
  LOG_LEVEL: coreShape.LOG_LEVEL,
  ...apiAddressShape,
  ...webAddressShape,
  ...screenServiceShape,
  ...allowedHostsShape,
  /** The API as the web service reaches it; default http://API_HOST:API_PORT. */
  API_INTERNAL_URL: optionalString,
});

/**
 * `apps/bridge`: the stateless credential proxy. It alone holds the external token;
 * its callers (clients: one per agent harness) hold only their own bridge token. Not part of the
 * launcher's runtime slice: it runs beside a deployment, often on another machine.
 */
/** A key prefix has no `:` (so it is never a kind like `conversation:`) and ends in `/`. */
const BRIDGE_KEY_PREFIX_PATTERN = /^[a-z0-9][a-z0-9._-]{0,39}\/$/;
const secret = (name: string) =>
  z.string().min(32, `${name} must be at least 32 characters (openssl rand -hex 32)`);
export const bridgeEnvSchema = z.object({
  LOG_LEVEL: coreShape.LOG_LEVEL,
  /** One client's token in plain text: the client named `default`. */
  BRIDGE_TOKEN: secret("BRIDGE_TOKEN").optional(),
  /** Named clients, `name=sha256:<hex>` separated by commas. */
  BRIDGE_TOKENS: optionalString,
  /** A file of named clients, one `<name> sha256:<hex>` a line; read by the bridge's main. */
  BRIDGE_TOKENS_FILE: optionalString,
  /** An MCP session over HTTP with no request for this long is closed like a DELETE. */
  BRIDGE_MCP_IDLE_SECONDS: z.coerce.number().int().min(1).max(86_400).default(900),
  BRIDGE_MCP_MAX_SESSIONS_PER_CLIENT: z.coerce.number().int().min(1).max(10_000).default(16),
  /** The API's EXTERNAL_COMPUTER_TOKEN. */
  RAKAZO_EXTERNAL_TOKEN: secret("RAKAZO_EXTERNAL_TOKEN"),
  /** Where the API listens, e.g. http://127.0.0.1:3000. */
  RAKAZO_API_URL: z.url(),
  BRIDGE_HOST: z.string().default("127.0.0.1"),
  BRIDGE_PORT: port.default(7400),
  /**
   * Browser origins allowed to call the bridge (`https://app.example,http://localhost:5173`), given
   * CORS answers. A request with no Origin (any non-browser client) is always allowed; loopback
   * origins are allowed too while BRIDGE_HOST is a loopback address. Any other Origin gets 403.
   */
  BRIDGE_ALLOWED_ORIGINS: z
    .string()
    .optional()
    .transform((value, ctx) => {
      const origins: string[] = [];
      for (const entry of (value ?? "").split(",").map((e) => e.trim())) {
        if (entry === "") continue;
        const origin = originOf(entry);
        if (origin === undefined) {
          ctx.addIssue({
            code: "custom",
            message: `${entry.slice(0, 80)} is not an origin (scheme://host[:port], nothing after it)`,
          });
          return z.NEVER;
        }
        origins.push(origin);
      }
      return origins;
    }),
  /**
   * Put in front of every computer key and screen this bridge derives (docs/external.md
   * "Identity is derived"): bridges of separate deployments sharing one API keep apart.
   */
  BRIDGE_KEY_PREFIX: z
    .string()
    .regex(BRIDGE_KEY_PREFIX_PATTERN, "BRIDGE_KEY_PREFIX must be 1-40 of a-z 0-9 . _ - followed by /")
    .optional(),
});

/** `text` as a serialized origin (lowercase, default port left out), or undefined if it is more. */
function originOf(text: string): string | undefined {
  try {
    const url = new URL(text);
    if (url.protocol !== "http:" && url.protocol !== "https:") return undefined;
    const bare = url.pathname === "/" && !url.search && !url.hash && !url.username && !url.password;
    return bare && !text.endsWith("#") && !text.endsWith("?") ? url.origin : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A bridge client's name. It prefixes the client's computer keys (`client:<name>/…`), so it has
 * neither `/` nor `:` and is short enough to leave the scope's names room under the API's limit.
 */
export const BRIDGE_CLIENT_NAME = /^[a-z0-9][a-z0-9_-]{0,31}$/;
/** The client BRIDGE_TOKEN authenticates. */
export const BRIDGE_DEFAULT_CLIENT = "default";

export interface BridgeClient {
  readonly name: string;
  /** SHA-256 of the client's token, 64 lowercase hex digits: the bridge never sees it in plain text. */
  readonly tokenSha256: string;
}

const TOKEN_HASH = /^sha256:([0-9a-f]{64})$/i;
const EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
const HASH_HINT = 'expected sha256:<64 hex digits> (printf %s "$TOKEN" | sha256sum)';

/** One `name` + `sha256:<hex>` entry, or the problem with it (`where` says which entry). */
function clientEntry(where: string, name: string | undefined, hash: string | undefined): BridgeClient {
  if (!name || !BRIDGE_CLIENT_NAME.test(name)) {
    throw new ConfigError(`${where}: the client name must match ${BRIDGE_CLIENT_NAME.source}`);
  }
  const digest = TOKEN_HASH.exec(hash ?? "")?.[1];
  if (!digest) throw new ConfigError(`${where}: ${HASH_HINT}`);
  if (digest.toLowerCase() === EMPTY_SHA256) {
    throw new ConfigError(`${where}: that is the hash of an empty token`);
  }
  return { name, tokenSha256: digest.toLowerCase() };
}

/**
 * Every client of the bridge from BRIDGE_TOKEN, BRIDGE_TOKENS and the contents of
 * BRIDGE_TOKENS_FILE. Names and tokens are each unique: two clients with one token could not be
 * told apart, and the second of two entries for one name would silently replace the first.
 */
function bridgeClientsOf(
  env: { readonly BRIDGE_TOKEN?: string | undefined; readonly BRIDGE_TOKENS?: string | undefined },
  file: { readonly path: string; readonly contents: string } | undefined,
): BridgeClient[] {
  const clients: { client: BridgeClient; where: string }[] = [];
  if (env.BRIDGE_TOKEN !== undefined) {
    const tokenSha256 = createHash("sha256").update(env.BRIDGE_TOKEN).digest("hex");
    clients.push({ client: { name: BRIDGE_DEFAULT_CLIENT, tokenSha256 }, where: "BRIDGE_TOKEN" });
  }
  const listed = (env.BRIDGE_TOKENS ?? "").split(",").map((entry) => entry.trim());
  listed.forEach((entry, index) => {
    if (entry === "") return;
    const where = `BRIDGE_TOKENS entry ${index + 1}`;
    const at = entry.indexOf("=");
    const name = at < 0 ? entry : entry.slice(0, at).trim();
    const hash = at < 0 ? undefined : entry.slice(at + 1).trim();
    clients.push({ client: clientEntry(where, name, hash), where });
  });
  file?.contents.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.replace(/(^|\s)#.*$/, "").trim();
    if (line === "") return;
    const where = `BRIDGE_TOKENS_FILE ${file.path} line ${index + 1}`;
    const [name, hash, ...rest] = line.split(/\s+/);
    if (rest.length > 0) throw new ConfigError(`${where}: expected <client-name> sha256:<hex>`);
    clients.push({ client: clientEntry(where, name, hash), where });
  });
  if (clients.length === 0) {
    throw new ConfigError("the bridge has no clients: set BRIDGE_TOKEN, BRIDGE_TOKENS or BRIDGE_TOKENS_FILE");
  }
  const seen = new Map<string, string>();
  for (const { client, where } of clients) {
    const byName = seen.get(`name:${client.name}`);
    if (byName) throw new ConfigError(`${where}: client ${client.name} is already defined by ${byName}`);
    const byToken = seen.get(`token:${client.tokenSha256}`);
    if (byToken) throw new ConfigError(`${where}: the token of client ${client.name} is also ${byToken}'s`);
    seen.set(`name:${client.name}`, where);
    seen.set(`token:${client.tokenSha256}`, where);
  }
  return clients.map(({ client }) => client);
}

/** The bridge's stdio MCP server: a child of the harness, so it holds only BRIDGE_TOKEN. */
export const bridgeMcpEnvSchema = z.object({
  BRIDGE_URL: z.url(),
  BRIDGE_TOKEN: secret("BRIDGE_TOKEN"),
  /** The conversation this harness session is; a random one per process when unset. */
  BRIDGE_CONVERSATION_ID: optionalString,
  /** The Team root for `share: true`. */
  BRIDGE_TEAM_ROOT: optionalString,
});

/** Everything: the launcher checks every slice before it starts the processes that read them. */
export const runtimeEnvSchema = z
  .object({
    ...apiEnvSchema.shape,
    ...workerEnvSchema.shape,
    ...webEnvSchema.shape,
    EMBEDDED_POSTGRES_PORT: port.default(54329),
  })
  .superRefine(requireSelectedProviderKey);

export type ApiEnv = z.infer<typeof apiEnvSchema>;
export type WorkerEnv = z.infer<typeof workerEnvSchema>;
export type WebEnv = z.infer<typeof webEnvSchema>;
export type RuntimeEnv = z.infer<typeof runtimeEnvSchema>;
/** The bridge's slice: its clients instead of the variables they were read from. */
export type BridgeEnv = Omit<z.infer<typeof bridgeEnvSchema>, "BRIDGE_TOKEN" | "BRIDGE_TOKENS"> & {
  readonly clients: readonly BridgeClient[];
};
export type BridgeMcpEnv = z.infer<typeof bridgeMcpEnvSchema>;
/** The variables API and worker share: what `createRuntime` needs to build the same context. */
export type ServicesEnv = Pick<
  ApiEnv & WorkerEnv,
  keyof typeof coreShape | keyof typeof providerShape | keyof typeof homesShape | "AGENT_MODEL"
>;

export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

/**
 * Parses one slice; a bad value names the variable and what was expected. An empty value
 * means unset (so `.env.example` copied as is, with its blank lines, is valid). Variables of
 * other slices are ignored.
 */
function parseSlice<S extends z.ZodType>(schema: S, env: Record<string, string | undefined>): z.infer<S> {
  const set = Object.fromEntries(Object.entries(env).filter(([, value]) => value?.trim() !== ""));
  const result = schema.safeParse(set);
  if (result.success) return result.data;
  const problems = result.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
  throw new ConfigError(`invalid environment: ${problems}`);
}

export const parseApiEnv = (env: Record<string, string | undefined>): ApiEnv => parseSlice(apiEnvSchema, env);
export const parseWorkerEnv = (env: Record<string, string | undefined>): WorkerEnv =>
  parseSlice(workerEnvSchema, env);
export const parseWebEnv = (env: Record<string, string | undefined>): WebEnv => parseSlice(webEnvSchema, env);
/**
 * The bridge's slice with its clients. This package reads no files: the bridge passes
 * `readFile` for BRIDGE_TOKENS_FILE, and a file that cannot be read is a ConfigError naming it.
 */
export function parseBridgeEnv(
  env: Record<string, string | undefined>,
  files: { readonly readFile?: (path: string) => string } = {},
): BridgeEnv {
  const { BRIDGE_TOKEN, BRIDGE_TOKENS, ...rest } = parseSlice(bridgeEnvSchema, env);
  let file: { path: string; contents: string } | undefined;
  const path = rest.BRIDGE_TOKENS_FILE;
  if (path !== undefined) {
    if (!files.readFile) throw new ConfigError("BRIDGE_TOKENS_FILE is set, but no file reader was given");
    try {
      file = { path, contents: files.readFile(path) };
    } catch (error) {
      throw new ConfigError(`BRIDGE_TOKENS_FILE: cannot read ${path}: ${(error as Error).message}`);
    }
  }
  return { ...rest, clients: bridgeClientsOf({ BRIDGE_TOKEN, BRIDGE_TOKENS }, file) };
}
export const parseBridgeMcpEnv = (env: Record<string, string | undefined>): BridgeMcpEnv =>
  parseSlice(bridgeMcpEnvSchema, env);
export const parseRuntimeEnv = (env: Record<string, string | undefined>): RuntimeEnv =>
  parseSlice(runtimeEnvSchema, env);

export function requireDatabaseUrl(env: { readonly DATABASE_URL?: string | undefined }): string {
  if (!env.DATABASE_URL) {
    throw new ConfigError("DATABASE_URL is not set (the launcher sets it when it starts embedded Postgres)");
  }
  return env.DATABASE_URL;
}
