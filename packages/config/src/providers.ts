/**
 * The provider table: one entry per kind `RAKAZO_PROVIDER` may name besides `auto`, holding the
 * variables only that kind reads (`env`), the variable with its API key when it is a cloud
 * provider (`key`, required once that kind is selected) and its settings, the options
 * `createProvider` (@rakazo/sandbox) takes for it (`settings`). The kind enum, the provider part
 * of every slice that builds a provider (./env.ts) and `ProviderSettings` are derived from it.
 */
import { join } from "node:path";
import { z } from "zod";
import type { ProviderBaseEnv } from "./env.ts";
import { optionalSeconds, optionalString, optionalUrl } from "./values.ts";

/** What a shape's variables hold once parsed. */
type ParsedShape<Shape extends z.ZodRawShape> = keyof Shape extends never
  ? unknown
  : z.infer<z.ZodObject<Shape>>;

interface ProviderEntry<
  Shape extends z.ZodRawShape,
  Key extends (keyof Shape & string) | undefined,
  Settings,
> {
  readonly env: Shape;
  readonly key: Key;
  /** All but `kind` and a cloud provider's `apiKey`, which `providerSettings` checks and adds. */
  readonly settings: (env: ParsedShape<Shape> & ProviderBaseEnv) => Settings;
}

/** One table entry, its settings typed by its own variables and the shared ones. */
const entry = <
  const Shape extends z.ZodRawShape,
  const Key extends (keyof Shape & string) | undefined,
  Settings,
>(
  provider: ProviderEntry<Shape, Key, Settings>,
) => provider;

/** Only the options that are set: an adapter's own default applies to the others. */
function defined<T extends Record<string, unknown>>(options: T): Partial<T> {
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/**
 * The supervisor's desktop admission (CMP-5) from `RAKAZO_DESKTOP_*`: only the set ones, so an
 * unset variable keeps the supervisor's own default.
 */
function desktopAdmission(env: ProviderBaseEnv): { desktopAdmission?: DesktopAdmission } {
  const set = defined({
    memoryMib: env.RAKAZO_DESKTOP_MEMORY_MIB,
    pids: env.RAKAZO_DESKTOP_PIDS,
    floorMemoryMib: env.RAKAZO_DESKTOP_FLOOR_MEMORY_MIB,
    floorPids: env.RAKAZO_DESKTOP_FLOOR_PIDS,
    cpuPressureMax: env.RAKAZO_DESKTOP_CPU_PRESSURE_MAX,
  });
  return Object.keys(set).length > 0 ? { desktopAdmission: set } : {};
}

/** Mirrors `@rakazo/sandbox`' DesktopAdmissionSettings (config depends on nothing of ours). */
interface DesktopAdmission {
  readonly memoryMib?: number;
  readonly pids?: number;
  readonly floorMemoryMib?: number;
  readonly floorPids?: number;
  readonly cpuPressureMax?: number;
}

/** Where the launcher stages the supervisor bundle for the host provider. */
export function hostSupervisorBundle(env: {
  readonly DATA_DIR: string;
  readonly RAKAZO_HOST_SUPERVISOR?: string | undefined;
}): string {
  return env.RAKAZO_HOST_SUPERVISOR ?? join(env.DATA_DIR, "host", "supervisor.mjs");
}

/** Where the launcher stages the supervisor bundle the remote providers install (CMP-8). */
export function remoteSupervisorBundle(env: {
  readonly DATA_DIR: string;
  readonly RAKAZO_REMOTE_SUPERVISOR?: string | undefined;
}): string {
  return env.RAKAZO_REMOTE_SUPERVISOR ?? join(env.DATA_DIR, "remote", "supervisor.mjs");
}

/**
 * What every cloud provider reads: keys are read by API and worker only (the web
 * slice has none, and the launcher does not hand them to the web process); the `*_URL`
 * overrides point an adapter at a self-hosted service or at the local emulator
 * (`packages/emulators`).
 */
const remoteShape = {
  /** The supervisor bundle installed into every remote machine; default DATA_DIR/remote/supervisor.mjs. */
  RAKAZO_REMOTE_SUPERVISOR: optionalString,
  /**
   * Where the machines' template/snapshot carries the supervisor bundle (built from the computer
   * image: /opt/rakazo/supervisor.mjs); a copy that passes the sha256 check spares the upload.
   */
  RAKAZO_REMOTE_SUPERVISOR_IN_IMAGE: z
    .string()
    .regex(/^\/[^\0]*$/, "an absolute path inside the machine")
    .optional(),
};
type RemoteBaseEnv = ProviderBaseEnv & ParsedShape<typeof remoteShape>;

/**
 * A cloud provider's settings share the supervisor bundle by path (the launcher stages it, API
 * and worker install its bytes into every machine). Its API key is added by `providerSettings`;
 * it is never logged (the redaction blanks `apiKey`) nor put in a URL.
 */
const remoteCommon = (env: RemoteBaseEnv) => ({
  supervisorBundlePath: remoteSupervisorBundle(env),
  ...defined({ supervisorInImage: env.RAKAZO_REMOTE_SUPERVISOR_IN_IMAGE }),
  screenLimit: env.SANDBOX_TEAM_SCREEN_LIMIT,
  ...desktopAdmission(env),
});

/** E2B and Novita speak one API (the e2b SDK): the same variables, each under its own prefix. */
const e2bFamilyShape = {
  API_KEY: optionalString,
  API_URL: optionalUrl,
  SANDBOX_URL: optionalUrl,
  DOMAIN: optionalString,
  /** How a hosted port's host becomes a URL, with `{host}`; default https://{host}. */
  PORT_URL: optionalString,
  TEMPLATE: optionalString,
  /** Sandbox TTL, sent at create and every connect; default one hour. */
  TTL_SECONDS: optionalSeconds,
  /** What the service does at the TTL: pause keeps the filesystem (default), kill removes it. */
  ON_TIMEOUT: z.enum(["pause", "kill"]).optional(),
};

/** `shape`'s variables under `prefix`: `API_KEY` becomes `E2B_API_KEY`. */
function prefixed<P extends string, S extends z.ZodRawShape>(prefix: P, shape: S) {
  return Object.fromEntries(Object.entries(shape).map(([name, value]) => [`${prefix}_${name}`, value])) as {
    [K in keyof S & string as `${P}_${K}`]: S[K];
  };
}

/** An E2B-family entry: the settings read the prefixed variables back by their own names. */
function e2bFamily<P extends "E2B" | "NOVITA">(prefix: P) {
  return {
    env: { ...remoteShape, ...prefixed(prefix, e2bFamilyShape) },
    key: `${prefix}_API_KEY` as const,
    settings: (env: RemoteBaseEnv & Readonly<Record<string, unknown>>) => {
      const own = Object.fromEntries(
        Object.keys(e2bFamilyShape).map((name) => [name, env[`${prefix}_${name}`]]),
      ) as ParsedShape<typeof e2bFamilyShape>;
      return {
        ...remoteCommon(env),
        ...defined({
          apiUrl: own.API_URL,
          sandboxUrl: own.SANDBOX_URL,
          domain: own.DOMAIN,
          portUrlTemplate: own.PORT_URL,
          template: own.TEMPLATE,
          ttlMs: own.TTL_SECONDS === undefined ? undefined : own.TTL_SECONDS * 1_000,
          onTimeout: own.ON_TIMEOUT,
        }),
      };
    },
  };
}

export const PROVIDERS = {
  fake: entry({
    env: {},
    key: undefined,
    settings: (env) => ({
      rootDir: join(env.DATA_DIR, "fake-computers"),
      screenLimit: env.SANDBOX_TEAM_SCREEN_LIMIT,
    }),
  }),
  docker: entry({
    env: {
      RAKAZO_COMPUTER_IMAGE: z.string().default("rakazo-computer:latest"),
      DOCKER_SOCKET: z.string().default("/var/run/docker.sock"),
      /**
       * The OCI runtime computers run under, as the engine names it: `runc` (Docker's default)
       * or `runsc` (gVisor, registered by scripts/docker-engine.sh; docs/security.md).
       */
      RAKAZO_DOCKER_RUNTIME: z
        .string()
        .regex(
          /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/,
          "an OCI runtime name the Docker engine knows, e.g. runc or runsc",
        )
        .default("runc"),
      /** The upstream network of the per-computer egress proxies (made when missing). */
      COMPUTER_EGRESS_NETWORK: z.string().default("rakazo-egress"),
      /**
       * Each home on a loop-mounted disk of RAKAZO_COMPUTER_DISK_MIB (needs a root worker in the
       * Docker engine's mount namespace; not under compose). `auto`: where the worker's probe at
       * start passes, else off with one warning; `on`: must work, else the worker does not
       * start; `off`: homes share DATA_DIR's filesystem.
       */
      RAKAZO_DOCKER_HOME_DISKS: z.enum(["auto", "on", "off"]).default("auto"),
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
    },
    key: undefined,
    settings: (env) => ({
      image: env.RAKAZO_COMPUTER_IMAGE,
      dataDir: env.DATA_DIR,
      socketPath: env.DOCKER_SOCKET,
      runtime: env.RAKAZO_DOCKER_RUNTIME,
      screenLimit: env.SANDBOX_TEAM_SCREEN_LIMIT,
      ...desktopAdmission(env),
      memoryBytes: env.RAKAZO_COMPUTER_MEMORY_MIB * 1024 ** 2,
      nanoCpus: Math.round(env.RAKAZO_COMPUTER_CPUS * 1e9),
      pidsLimit: env.RAKAZO_COMPUTER_PIDS,
      ...homeDisks(env.RAKAZO_DOCKER_HOME_DISKS, env.RAKAZO_COMPUTER_DISK_MIB),
      egressNetwork: env.COMPUTER_EGRESS_NETWORK,
      egressPrivateAllow: env.COMPUTER_EGRESS_PRIVATE_ALLOW,
    }),
  }),
  host: entry({
    env: {
      /** Host provider (PRV-6): the staged supervisor bundle; default DATA_DIR/host/supervisor.mjs. */
      RAKAZO_HOST_SUPERVISOR: optionalString,
      /** Host provider: the Xvfb displays it owns, `[base, base + count)`; nothing else may use them. */
      RAKAZO_HOST_DISPLAY_BASE: z.coerce.number().int().min(1).max(60_000).default(1100),
      RAKAZO_HOST_DISPLAY_COUNT: z.coerce.number().int().min(1).max(5_000).default(400),
    },
    key: undefined,
    settings: (env) => ({
      dataDir: env.DATA_DIR,
      supervisorBundle: hostSupervisorBundle(env),
      screenLimit: env.SANDBOX_TEAM_SCREEN_LIMIT,
      displayBase: env.RAKAZO_HOST_DISPLAY_BASE,
      displayCount: env.RAKAZO_HOST_DISPLAY_COUNT,
    }),
  }),
  e2b: e2bFamily("E2B"),
  novita: e2bFamily("NOVITA"),
  daytona: entry({
    env: {
      ...remoteShape,
      DAYTONA_API_KEY: optionalString,
      DAYTONA_API_URL: optionalUrl,
      DAYTONA_TARGET: optionalString,
      /** The snapshot registered from the computer image; default rakazo-computer. */
      DAYTONA_SNAPSHOT: optionalString,
      DAYTONA_AUTO_ARCHIVE_MINUTES: z.coerce.number().int().min(0).optional(),
      DAYTONA_LIFECYCLE_TIMEOUT_SECONDS: optionalSeconds,
    },
    key: "DAYTONA_API_KEY",
    settings: (env) => ({
      ...remoteCommon(env),
      ...defined({
        apiUrl: env.DAYTONA_API_URL,
        target: env.DAYTONA_TARGET,
        snapshot: env.DAYTONA_SNAPSHOT,
        autoArchiveMinutes: env.DAYTONA_AUTO_ARCHIVE_MINUTES,
        lifecycleTimeoutSeconds: env.DAYTONA_LIFECYCLE_TIMEOUT_SECONDS,
      }),
    }),
  }),
  boat: entry({
    env: {
      ...remoteShape,
      BOAT_API_KEY: optionalString,
      BOAT_API_URL: optionalUrl,
      BOAT_TYPE: z.enum(["small", "default", "large"]).optional(),
      /** The machine TTL, refreshed while the computer is used; default 7200 (two hours). */
      BOAT_TTL_SECONDS: optionalSeconds,
    },
    key: "BOAT_API_KEY",
    settings: (env) => ({
      ...remoteCommon(env),
      ...defined({ apiUrl: env.BOAT_API_URL, type: env.BOAT_TYPE, ttlSeconds: env.BOAT_TTL_SECONDS }),
    }),
  }),
};

export type ProviderKind = keyof typeof PROVIDERS;
type Entry<K extends ProviderKind> = (typeof PROVIDERS)[K];
type KeyOf<K extends ProviderKind> = Entry<K>["key"];
const PROVIDER_KINDS = Object.keys(PROVIDERS) as ProviderKind[];

/** The cloud providers (the kinds with an API key): opted into with that key, never chosen by `auto`. */
export type RemoteProviderKind = { [K in ProviderKind]: KeyOf<K> extends string ? K : never }[ProviderKind];

/** The variable holding each cloud provider's API key: required when that provider is selected. */
export const REMOTE_PROVIDER_KEYS = Object.fromEntries(
  PROVIDER_KINDS.flatMap((kind) => {
    const key = PROVIDERS[kind].key;
    return key === undefined ? [] : [[kind, key]];
  }),
) as { readonly [K in RemoteProviderKind]: KeyOf<K> };

/** Docker's home disks (providers/docker/home-disk.ts): unless switched off. */
function homeDisks(
  setting: "auto" | "on" | "off",
  diskMib: number,
): { readonly homeDisks?: "auto" | "on"; readonly diskBytes?: number } {
  return setting === "off" ? {} : { homeDisks: setting, diskBytes: diskMib * 1024 ** 2 };
}

/**
 * The options `createProvider` (@rakazo/sandbox) takes, per concrete kind. A cloud provider's
 * API key is here because `createProvider` needs it; it is never logged (the redaction blanks
 * `apiKey`) nor put in a URL.
 */
export type ProviderSettings = {
  [K in ProviderKind]: { readonly kind: K } & (KeyOf<K> extends string
    ? { readonly apiKey: string }
    : unknown) &
    ReturnType<Entry<K>["settings"]>;
}[ProviderKind];

type UnionToIntersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void
  ? I
  : never;

/** `RAKAZO_PROVIDER` and every kind's own variables: the provider part of each slice that builds one. */
export const providerEnvShape = {
  RAKAZO_PROVIDER: z.enum(["auto", ...PROVIDER_KINDS]).default("auto"),
  ...(Object.assign({}, ...PROVIDER_KINDS.map((kind) => PROVIDERS[kind].env)) as UnionToIntersection<
    Entry<ProviderKind>["env"]
  >),
};

/**
 * A selected cloud provider without its key, named by its variable, so `./rakazo start` (which
 * parses every slice first) stops before it starts anything; undefined when there is nothing to refuse.
 */
export function missingProviderKey(
  env: Readonly<Record<string, unknown>>,
  kind: string,
): { readonly variable: string; readonly message: string } | undefined {
  const variable = Object.hasOwn(REMOTE_PROVIDER_KEYS, kind)
    ? REMOTE_PROVIDER_KEYS[kind as RemoteProviderKind]
    : undefined;
  if (variable === undefined || env[variable] !== undefined) return undefined;
  return {
    variable,
    message: `RAKAZO_PROVIDER=${kind} needs ${variable} (the provider's API key; with the local emulator, the key it printed)`,
  };
}
