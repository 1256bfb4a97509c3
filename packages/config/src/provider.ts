/**
 * Pure settings derived from the environment for what `createRuntime` builds: the provider,
 * the home store and the sizing policy. Nothing here does I/O.
 */
import { ConfigError, type ProviderBaseEnv, type ServicesEnv } from "./env.ts";
import {
  missingProviderKey,
  PROVIDERS,
  type ProviderSettings,
  type providerEnvShape,
  REMOTE_PROVIDER_KEYS,
} from "./providers.ts";

/** Mirrors `@rakazo/services`' SizingPolicy (config depends on nothing of ours). */
export interface SizingPolicy {
  readonly defaults: ComputerSize;
  readonly max: ComputerSize;
}

interface ComputerSize {
  readonly memoryMib: number;
  readonly cpus: number;
  readonly pids: number;
  readonly diskMib: number;
}

/** Mirrors `@rakazo/services`' SpaceQuotaPolicy: the most each space may use; null is no limit. */
export interface SpaceQuotaPolicy {
  readonly computers: number | null;
  readonly memoryMib: number | null;
  readonly cpus: number | null;
}

/** What `providerSettings` reads: `RAKAZO_PROVIDER`, every kind's own variables and the shared ones. */
export type ProviderEnv = Pick<ServicesEnv, keyof typeof providerEnvShape | keyof ProviderBaseEnv>;

/**
 * The provider of a concrete kind. `auto` is resolved by the launcher, once, so API and worker
 * always agree; a process started on its own with `auto` refuses to guess (it used to become
 * the fake provider silently, so a deployment meant for Docker ran fake computers).
 */
export function providerSettings(
  env: ProviderEnv,
  kind: ProviderEnv["RAKAZO_PROVIDER"] = env.RAKAZO_PROVIDER,
): ProviderSettings {
  if (kind === "auto") {
    throw new ConfigError(
      "RAKAZO_PROVIDER=auto is unresolved: the launcher (./rakazo start) resolves it and passes " +
        "the choice on; a process started on its own needs RAKAZO_PROVIDER=docker, host or fake " +
        `(or a cloud provider: ${Object.keys(REMOTE_PROVIDER_KEYS).join(", ")})`,
    );
  }
  const missing = missingProviderKey(env, kind);
  if (missing) throw new ConfigError(missing.message);
  const { key, settings } = PROVIDERS[kind];
  // The table's entries are one union here: each kind's settings are its own by construction.
  return { kind, ...(key === undefined ? {} : { apiKey: env[key] }), ...settings(env) } as ProviderSettings;
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

/** Deployment defaults and maxima for computer sizes; checked by `computer/create`. */
export function sizingFromEnv(
  env: Pick<
    ServicesEnv,
    | "RAKAZO_COMPUTER_MEMORY_MIB"
    | "RAKAZO_COMPUTER_CPUS"
    | "RAKAZO_COMPUTER_PIDS"
    | "RAKAZO_COMPUTER_MAX_MEMORY_MIB"
    | "RAKAZO_COMPUTER_MAX_CPUS"
    | "RAKAZO_COMPUTER_MAX_PIDS"
    | "RAKAZO_COMPUTER_DISK_MIB"
    | "RAKAZO_COMPUTER_MAX_DISK_MIB"
  >,
): SizingPolicy {
  const defaults = {
    memoryMib: env.RAKAZO_COMPUTER_MEMORY_MIB,
    cpus: env.RAKAZO_COMPUTER_CPUS,
    pids: env.RAKAZO_COMPUTER_PIDS,
    diskMib: env.RAKAZO_COMPUTER_DISK_MIB,
  };
  const max = {
    memoryMib: env.RAKAZO_COMPUTER_MAX_MEMORY_MIB,
    cpus: env.RAKAZO_COMPUTER_MAX_CPUS,
    pids: env.RAKAZO_COMPUTER_MAX_PIDS,
    diskMib: env.RAKAZO_COMPUTER_MAX_DISK_MIB,
  };
  for (const key of ["memoryMib", "cpus", "pids", "diskMib"] as const) {
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
