/**
 * Pure settings derived from the environment for what `createRuntime` builds: the provider,
 * the home store and the sizing policy. Nothing here does I/O.
 */
import { join } from "node:path";
import { ConfigError, REMOTE_PROVIDER_KEYS, type RemoteProviderKind, type ServicesEnv } from "./env.ts";

/** Mirrors `@rakazo/services`' SizingPolicy (config depends on nothing of ours). */
export interface SizingPolicy {
  readonly defaults: { readonly memoryMib: number; readonly cpus: number; readonly pids: number };
  readonly max: { readonly memoryMib: number; readonly cpus: number; readonly pids: number };
}

/** Mirrors `@rakazo/services`' SpaceQuotaPolicy: the most each space may use; null is no limit. */
export interface SpaceQuotaPolicy {
  readonly computers: number | null;
  readonly memoryMib: number | null;
  readonly cpus: number | null;
}

/** The options `createProvider` (@rakazo/sandbox) takes, per concrete kind. */
export type ProviderSettings =
  | { readonly kind: "fake"; readonly rootDir: string; readonly screenLimit: number }
  | {
      readonly kind: "docker";
      readonly image: string;
      readonly dataDir: string;
      readonly socketPath: string;
      readonly screenLimit: number;
      readonly memoryBytes: number;
      readonly nanoCpus: number;
      readonly pidsLimit: number;
      /** Issue 16: the egress proxies' upstream network and the private ranges opened to it. */
      readonly egressNetwork: string;
      readonly egressPrivateAllow: readonly string[];
    }
  | {
      readonly kind: "host";
      readonly dataDir: string;
      readonly supervisorBundle: string;
      readonly screenLimit: number;
      readonly displayBase: number;
      readonly displayCount: number;
    }
  | RemoteProviderSettings;

/**
 * A cloud provider (issues 14, 15) as `createProvider` takes it: the adapter's options with the
 * supervisor bundle by path (the launcher stages it, API and worker install its bytes into every
 * machine). The API key is here because `createProvider` needs it; it is never logged (the
 * redaction blanks `apiKey`) nor put in a URL.
 */
export type RemoteProviderSettings =
  | (RemoteCommon<"e2b" | "novita"> & {
      readonly apiUrl?: string;
      readonly sandboxUrl?: string;
      readonly domain?: string;
      readonly portUrlTemplate?: string;
      readonly template?: string;
      readonly ttlMs?: number;
      readonly onTimeout?: "pause" | "kill";
    })
  | (RemoteCommon<"daytona"> & {
      readonly apiUrl?: string;
      readonly target?: string;
      readonly snapshot?: string;
      readonly autoArchiveMinutes?: number;
      readonly lifecycleTimeoutSeconds?: number;
    })
  | (RemoteCommon<"boat"> & {
      readonly apiUrl?: string;
      readonly type?: "small" | "default" | "large";
      readonly ttlSeconds?: number;
    });

interface RemoteCommon<K extends RemoteProviderKind> {
  readonly kind: K;
  readonly apiKey: string;
  readonly supervisorBundlePath: string;
  readonly screenLimit: number;
}

export type ProviderEnv = Pick<
  ServicesEnv,
  | "RAKAZO_PROVIDER"
  | "DATA_DIR"
  | "RAKAZO_COMPUTER_IMAGE"
  | "DOCKER_SOCKET"
  | "SANDBOX_TEAM_SCREEN_LIMIT"
  | "RAKAZO_COMPUTER_MEMORY_MIB"
  | "RAKAZO_COMPUTER_CPUS"
  | "RAKAZO_COMPUTER_PIDS"
  | "COMPUTER_EGRESS_NETWORK"
  | "COMPUTER_EGRESS_PRIVATE_ALLOW"
  | "RAKAZO_HOST_SUPERVISOR"
  | "RAKAZO_HOST_DISPLAY_BASE"
  | "RAKAZO_HOST_DISPLAY_COUNT"
  | "RAKAZO_REMOTE_SUPERVISOR"
  | RemoteProviderVariable
>;

type RemoteProviderVariable = Extract<
  keyof ServicesEnv,
  `E2B_${string}` | `NOVITA_${string}` | `DAYTONA_${string}` | `BOAT_${string}`
>;

/** Where the launcher stages the supervisor bundle for the host provider. */
export function hostSupervisorBundle(env: Pick<ServicesEnv, "DATA_DIR" | "RAKAZO_HOST_SUPERVISOR">): string {
  return env.RAKAZO_HOST_SUPERVISOR ?? join(env.DATA_DIR, "host", "supervisor.mjs");
}

/** Where the launcher stages the supervisor bundle the remote providers install (CMP-8). */
export function remoteSupervisorBundle(
  env: Pick<ServicesEnv, "DATA_DIR" | "RAKAZO_REMOTE_SUPERVISOR">,
): string {
  return env.RAKAZO_REMOTE_SUPERVISOR ?? join(env.DATA_DIR, "remote", "supervisor.mjs");
}

/** Only the options that are set: an adapter's own default applies to the others. */
function defined<T extends Record<string, unknown>>(options: T): Partial<T> {
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) as Partial<T>;
}

function remoteSettings(env: ProviderEnv, kind: RemoteProviderKind): RemoteProviderSettings {
  const variable = REMOTE_PROVIDER_KEYS[kind];
  const apiKey = env[variable];
  if (apiKey === undefined) {
    throw new ConfigError(`RAKAZO_PROVIDER=${kind} needs ${variable} (the provider's API key)`);
  }
  const common = {
    apiKey,
    supervisorBundlePath: remoteSupervisorBundle(env),
    screenLimit: env.SANDBOX_TEAM_SCREEN_LIMIT,
  };
  switch (kind) {
    case "e2b":
    case "novita": {
      const p = kind === "e2b" ? "E2B" : "NOVITA";
      const ttl = env[`${p}_TTL_SECONDS`];
      return {
        kind,
        ...common,
        ...defined({
          apiUrl: env[`${p}_API_URL`],
          sandboxUrl: env[`${p}_SANDBOX_URL`],
          domain: env[`${p}_DOMAIN`],
          portUrlTemplate: env[`${p}_PORT_URL`],
          template: env[`${p}_TEMPLATE`],
          ttlMs: ttl === undefined ? undefined : ttl * 1_000,
          onTimeout: env[`${p}_ON_TIMEOUT`],
        }),
      };
    }
    case "daytona":
      return {
        kind,
        ...common,
        ...defined({
          apiUrl: env.DAYTONA_API_URL,
          target: env.DAYTONA_TARGET,
          snapshot: env.DAYTONA_SNAPSHOT,
          autoArchiveMinutes: env.DAYTONA_AUTO_ARCHIVE_MINUTES,
          lifecycleTimeoutSeconds: env.DAYTONA_LIFECYCLE_TIMEOUT_SECONDS,
        }),
      };
    case "boat":
      return {
        kind,
        ...common,
        ...defined({ apiUrl: env.BOAT_API_URL, type: env.BOAT_TYPE, ttlSeconds: env.BOAT_TTL_SECONDS }),
      };
  }
}

/**
 * The provider of a concrete kind. `auto` is resolved by the launcher, once, so API and worker
 * always agree; a process started on its own with `auto` refuses to guess (it used to become
 * the fake provider silently, so a deployment meant for Docker ran fake computers).
 */
export function providerSettings(
  env: ProviderEnv,
  kind: ProviderEnv["RAKAZO_PROVIDER"] = env.RAKAZO_PROVIDER,
): ProviderSettings {
  switch (kind) {
    case "fake":
      return {
        kind: "fake",
        rootDir: join(env.DATA_DIR, "fake-computers"),
        screenLimit: env.SANDBOX_TEAM_SCREEN_LIMIT,
      };
    case "docker":
      return {
        kind: "docker",
        image: env.RAKAZO_COMPUTER_IMAGE,
        dataDir: env.DATA_DIR,
        socketPath: env.DOCKER_SOCKET,
        screenLimit: env.SANDBOX_TEAM_SCREEN_LIMIT,
        memoryBytes: env.RAKAZO_COMPUTER_MEMORY_MIB * 1024 ** 2,
        nanoCpus: Math.round(env.RAKAZO_COMPUTER_CPUS * 1e9),
        pidsLimit: env.RAKAZO_COMPUTER_PIDS,
        egressNetwork: env.COMPUTER_EGRESS_NETWORK,
        egressPrivateAllow: env.COMPUTER_EGRESS_PRIVATE_ALLOW,
      };
    case "host":
      return {
        kind: "host",
        dataDir: env.DATA_DIR,
        supervisorBundle: hostSupervisorBundle(env),
        screenLimit: env.SANDBOX_TEAM_SCREEN_LIMIT,
        displayBase: env.RAKAZO_HOST_DISPLAY_BASE,
        displayCount: env.RAKAZO_HOST_DISPLAY_COUNT,
      };
    case "e2b":
    case "novita":
    case "daytona":
    case "boat":
      return remoteSettings(env, kind);
    case "auto":
      throw new ConfigError(
        "RAKAZO_PROVIDER=auto is unresolved: the launcher (./rakazo start) resolves it and passes " +
          "the choice on; a process started on its own needs RAKAZO_PROVIDER=docker, host or fake " +
          "(or a cloud provider: e2b, novita, daytona, boat)",
      );
  }
}

/** Where workspaces are kept and what seals them (PER-3/4/5). */
export interface HomesSettings {
  readonly dataDir: string;
  /** `RAKAZO_MASTER_KEY`; unset: generated once into `DATA_DIR/master.key`. */
  readonly masterKey?: string;
  /** Object storage (PER-4) when `OBJECT_STORAGE_BUCKET` is set; else `DATA_DIR/homes` (PER-3). */
  readonly objectStorage?: {
    readonly bucket: string;
    readonly endpoint?: string;
    readonly region?: string;
    readonly accessKeyId?: string;
    readonly secretAccessKey?: string;
  };
}

export function homesSettings(
  env: Pick<
    ServicesEnv,
    | "DATA_DIR"
    | "RAKAZO_MASTER_KEY"
    | "OBJECT_STORAGE_BUCKET"
    | "OBJECT_STORAGE_ENDPOINT"
    | "OBJECT_STORAGE_REGION"
    | "OBJECT_STORAGE_ACCESS_KEY_ID"
    | "OBJECT_STORAGE_SECRET_ACCESS_KEY"
  >,
): HomesSettings {
  return {
    dataDir: env.DATA_DIR,
    ...(env.RAKAZO_MASTER_KEY ? { masterKey: env.RAKAZO_MASTER_KEY } : {}),
    ...(env.OBJECT_STORAGE_BUCKET
      ? {
          objectStorage: {
            bucket: env.OBJECT_STORAGE_BUCKET,
            ...(env.OBJECT_STORAGE_ENDPOINT ? { endpoint: env.OBJECT_STORAGE_ENDPOINT } : {}),
            ...(env.OBJECT_STORAGE_REGION ? { region: env.OBJECT_STORAGE_REGION } : {}),
            ...(env.OBJECT_STORAGE_ACCESS_KEY_ID ? { accessKeyId: env.OBJECT_STORAGE_ACCESS_KEY_ID } : {}),
            ...(env.OBJECT_STORAGE_SECRET_ACCESS_KEY
              ? { secretAccessKey: env.OBJECT_STORAGE_SECRET_ACCESS_KEY }
              : {}),
          },
        }
      : {}),
  };
}

/** Deployment defaults and maxima for computer sizes (issue 12); checked by `computer/create`. */
export function sizingFromEnv(
  env: Pick<
    ServicesEnv,
    | "RAKAZO_COMPUTER_MEMORY_MIB"
    | "RAKAZO_COMPUTER_CPUS"
    | "RAKAZO_COMPUTER_PIDS"
    | "RAKAZO_COMPUTER_MAX_MEMORY_MIB"
    | "RAKAZO_COMPUTER_MAX_CPUS"
    | "RAKAZO_COMPUTER_MAX_PIDS"
  >,
): SizingPolicy {
  const defaults = {
    memoryMib: env.RAKAZO_COMPUTER_MEMORY_MIB,
    cpus: env.RAKAZO_COMPUTER_CPUS,
    pids: env.RAKAZO_COMPUTER_PIDS,
  };
  const max = {
    memoryMib: env.RAKAZO_COMPUTER_MAX_MEMORY_MIB,
    cpus: env.RAKAZO_COMPUTER_MAX_CPUS,
    pids: env.RAKAZO_COMPUTER_MAX_PIDS,
  };
  for (const key of ["memoryMib", "cpus", "pids"] as const) {
    if (defaults[key] > max[key]) {
      throw new ConfigError(
        `computer sizing: the default ${key} (${defaults[key]}) exceeds its maximum (${max[key]})`,
      );
    }
  }
  return { defaults, max };
}

/** How many default-sized computers a space may run at once when no quota is configured. */
const DEFAULT_RUNNING_PER_SPACE = 8;

/**
 * Per-space quotas; checked by `computer/create`, start, recovery and a Team Computer's first
 * use. Unset: 20 computers, and the memory and CPUs of eight default-sized computers, at least
 * one computer of the maximum size (32768 MiB and 16 CPUs with the default sizes). 0: no limit.
 * A quota below one default-sized computer is refused: no space could start its Team Computer.
 */
export function spaceQuotasFromEnv(
  env: Pick<
    ServicesEnv,
    | "RAKAZO_SPACE_MAX_COMPUTERS"
    | "RAKAZO_SPACE_MAX_MEMORY_MIB"
    | "RAKAZO_SPACE_MAX_CPUS"
    | "RAKAZO_COMPUTER_MEMORY_MIB"
    | "RAKAZO_COMPUTER_CPUS"
    | "RAKAZO_COMPUTER_MAX_MEMORY_MIB"
    | "RAKAZO_COMPUTER_MAX_CPUS"
  >,
): SpaceQuotaPolicy {
  const limit = (set: number | undefined, unset: number) =>
    set === undefined ? unset : set === 0 ? null : set;
  const quotas = {
    computers: limit(env.RAKAZO_SPACE_MAX_COMPUTERS, 20),
    memoryMib: limit(
      env.RAKAZO_SPACE_MAX_MEMORY_MIB,
      Math.max(
        DEFAULT_RUNNING_PER_SPACE * env.RAKAZO_COMPUTER_MEMORY_MIB,
        env.RAKAZO_COMPUTER_MAX_MEMORY_MIB,
      ),
    ),
    cpus: limit(
      env.RAKAZO_SPACE_MAX_CPUS,
      Math.max(DEFAULT_RUNNING_PER_SPACE * env.RAKAZO_COMPUTER_CPUS, env.RAKAZO_COMPUTER_MAX_CPUS),
    ),
  };
  const oneComputer = { memoryMib: env.RAKAZO_COMPUTER_MEMORY_MIB, cpus: env.RAKAZO_COMPUTER_CPUS };
  for (const key of ["memoryMib", "cpus"] as const) {
    const quota = quotas[key];
    if (quota !== null && quota < oneComputer[key]) {
      throw new ConfigError(
        `space quotas: the ${key} quota (${quota}) is below one computer of the default size (${oneComputer[key]}); 0 means no limit`,
      );
    }
  }
  return quotas;
}
