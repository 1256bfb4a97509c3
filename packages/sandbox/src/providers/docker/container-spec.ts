/**
 * Pure builders for the Docker adapter: names, host paths and container create options.
 * No I/O here, so every invariant below is unit-tested without a Docker engine.
 */
import { createHash } from "node:crypto";
import { join } from "node:path";
import type Docker from "dockerode";
import { SandboxError } from "../../errors.ts";
import type { NetworkPolicy, StopOptions } from "../../provider.ts";
import { persistentToolEnv } from "../../tool-env.ts";
import { COMPUTER_SIDE } from "./host-sockets.ts";
import {
  computerNetworkEnv,
  EGRESS_DIR,
  EGRESS_SIDE,
  networkFingerprint,
  usesEgressProxy,
} from "./network-spec.ts";
import { scratchTmpfs } from "./system-fs.ts";

/** Where the workspace (the Rakazo-owned home, PER-1) is mounted inside the computer. */
export const WORKSPACE_DIR = "/home/user/rakazo-home";
/**
 * Where the supervisor keeps its Unix sockets (`supervisor.sock`, `gateway.sock`, `vnc/`);
 * bind-mounted from `<dataDir>/run/<slug>/computer`. The host never connects there directly
 * (host-sockets.ts).
 */
export const RUNTIME_DIR = "/run/rakazo";
/** The workspace user of the computer image. Every exec and file operation runs as this user. */
export const WORKSPACE_UID = 1000;
export const WORKSPACE_GID = 1000;
export const WORKSPACE_USER = `${WORKSPACE_UID}:${WORKSPACE_GID}`;

export const DEFAULT_MEMORY_BYTES = 4 * 1024 ** 3;
export const DEFAULT_PIDS_LIMIT = 4096;
/** CPU is always bounded: one computer never takes every core of the host. */
export const DEFAULT_NANO_CPUS = 2_000_000_000;
/** Chromium needs more than Docker's 64 MB default /dev/shm. */
export const SHM_SIZE_BYTES = 256 * 1024 ** 2;
export const DEFAULT_LABEL_PREFIX = "rakazo";
/** Docker's own runtime; the engine reports it by this name in `HostConfig.Runtime`. */
export const DEFAULT_RUNTIME = "runc";

/**
 * How long `docker stop` lets a computer exit after SIGTERM before SIGKILL. The grace only
 * serves the supervisor's own shutdown — its browsers' clean close (PER-7): background commands
 * are SIGKILLed by it anyway, and everything else in the container by the kernel once tini
 * (PID 1) exits. So a computer whose browsers the caller already closed (`quiesced`) gets none:
 * waiting for the supervisor to tear down displays and screen servers guards nothing.
 */
export function stopGraceSeconds(options: StopOptions | undefined): number {
  return options?.quiesced ? 0 : 5;
}

export interface ContainerLabels {
  readonly computer: string;
  readonly home: string;
  readonly managed: string;
  /** The network policy's fingerprint (network-spec.ts); a container with another one is replaced. */
  readonly network: string;
  /** On a computer's egress proxy container: the computer id it serves. */
  readonly egressOf: string;
  /** On egress proxy and host-address watcher containers: the spec they were made from. */
  readonly egressSpec: string;
  /** On the host-address watcher: the host directory it writes. */
  readonly hostAddresses: string;
  /** On every container a deployment makes: its absolute data dir (deployment.ts). */
  readonly dataDir: string;
  /** On every container a deployment under Docker Compose makes: the compose project. */
  readonly composeProject: string;
}

/** Label keys; the prefix lets tests (or two installations on one engine) keep their containers apart. */
export function labelKeys(prefix: string): ContainerLabels {
  return {
    computer: `${prefix}.computer`,
    home: `${prefix}.home`,
    managed: `${prefix}.managed`,
    network: `${prefix}.network`,
    egressOf: `${prefix}.egress-of`,
    egressSpec: `${prefix}.egress-spec`,
    hostAddresses: `${prefix}.host-addresses`,
    dataDir: `${prefix}.data-dir`,
    composeProject: `${prefix}.compose-project`,
  };
}

/**
 * A short, stable, filesystem- and Docker-name-safe id for a computer. Used for the runtime
 * directory (socket paths must stay well under the 108-byte `sun_path` limit, so the computer
 * id itself, of unknown length, is never part of them) and for the container name.
 */
export function computerSlug(computerId: string): string {
  return createHash("sha256").update(computerId).digest("hex").slice(0, 12);
}

/**
 * One container per computer: the name is derived from the computer id, so two concurrent
 * provisions of one computer collide (409) instead of creating two machines.
 */
export function containerName(prefix: string, computerId: string): string {
  const safePrefix = prefix.replace(/[^a-zA-Z0-9_.-]/g, "-");
  return `${safePrefix}-${computerSlug(computerId)}`;
}

export interface HostPaths {
  /** `<dataDir>/homes/<homeKey>`: the workspace, owned by the home store (PER-3). */
  readonly homeDir: string;
  /** `<dataDir>/run/<slug>`: host-owned, never mounted; holds the host's links to the computer's sockets. */
  readonly runDir: string;
  /** `<runDir>/computer`: the computer's `/run/rakazo` (supervisor, gateway and VNC sockets), writable by it. */
  readonly computerRunDir: string;
  /** `<runDir>/egress`: the egress proxy's socket dir, read-only in the computer. */
  readonly egressDir: string;
}

export function hostPaths(dataDir: string, computerId: string, homeKey: string): HostPaths {
  const runDir = runDirFor(dataDir, computerId);
  return {
    homeDir: join(dataDir, "homes", homeKeySegment(homeKey)),
    runDir,
    computerRunDir: join(runDir, COMPUTER_SIDE),
    egressDir: join(runDir, EGRESS_SIDE),
  };
}

export function runDirFor(dataDir: string, computerId: string): string {
  return join(dataDir, "run", computerSlug(computerId));
}

/** A home key becomes one path segment under `homes/`; anything that could leave it is refused. */
function homeKeySegment(homeKey: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/.test(homeKey) || homeKey.includes("..")) {
    throw new SandboxError("INVALID_PATH", `invalid home key: ${JSON.stringify(homeKey)}`);
  }
  return homeKey;
}

export interface ContainerSpecInput {
  readonly image: string;
  readonly computerId: string;
  readonly homeKey: string;
  readonly paths: HostPaths;
  readonly labelPrefix: string;
  readonly memoryBytes: number;
  readonly pidsLimit: number;
  /** Defaults to DEFAULT_NANO_CPUS: a container without a CPU bound is never created. */
  readonly nanoCpus?: number;
  /** Overrides the image's CMD (the supervisor daemon); for images without a supervisor. */
  readonly command?: readonly string[];
  /** Extra environment for the computer, e.g. `SANDBOX_TEAM_SCREEN_LIMIT` for the supervisor. */
  readonly environment?: Readonly<Record<string, string>>;
  /** Absent = `none`. Never changes the container's own networking (network-spec.ts). */
  readonly network?: NetworkPolicy;
  /** The labels tying the container to its deployment (deployment.ts). */
  readonly deploymentLabels?: Readonly<Record<string, string>>;
  /** The OCI runtime (`runc` when absent; `runsc` is gVisor, docs/security.md). */
  readonly runtime?: string;
}

export function containerCreateOptions(input: ContainerSpecInput): Docker.ContainerCreateOptions {
  const keys = labelKeys(input.labelPrefix);
  return {
    name: containerName(input.labelPrefix, input.computerId),
    Image: input.image,
    ...(input.command ? { Cmd: [...input.command] } : {}),
    User: WORKSPACE_USER,
    WorkingDir: WORKSPACE_DIR,
    Hostname: "rakazo",
    Env: [
      "HOME=/home/user",
      "LANG=C.UTF-8",
      ...Object.entries(persistentToolEnv(WORKSPACE_DIR)).map(([key, value]) => `${key}=${value}`),
      ...Object.entries(input.environment ?? {}).map(([key, value]) => `${key}=${value}`),
      ...Object.entries(computerNetworkEnv(input.network)).map(([key, value]) => `${key}=${value}`),
    ],
    Labels: {
      ...input.deploymentLabels,
      [keys.computer]: input.computerId,
      [keys.home]: input.homeKey,
      [keys.managed]: "true",
      // Absent under `none`: that container is exactly the one made before policies existed.
      ...(usesEgressProxy(input.network) ? { [keys.network]: networkFingerprint(input.network) } : {}),
    },
    // Networking is off under every policy: the computer is reached only through
    // bind-mounted Unix sockets and `docker exec`, never through a container address, and it
    // reaches out only through its egress proxy's socket.
    NetworkDisabled: true,
    HostConfig: {
      Runtime: input.runtime ?? DEFAULT_RUNTIME,
      NetworkMode: "none",
      Memory: input.memoryBytes,
      MemorySwap: input.memoryBytes,
      NanoCpus: input.nanoCpus ?? DEFAULT_NANO_CPUS,
      PidsLimit: input.pidsLimit,
      ShmSize: SHM_SIZE_BYTES,
      // The image's ENTRYPOINT is tini; Docker's own init would be a second one.
      Init: false,
      // Nothing in the computer needs capabilities or setuid: it runs as the workspace user.
      CapDrop: ["ALL"],
      SecurityOpt: ["no-new-privileges"],
      RestartPolicy: { Name: "no" },
      AutoRemove: false,
      // The image's system is read-only; scratch is sized tmpfs counted in memory (system-fs.ts).
      ReadonlyRootfs: true,
      Tmpfs: scratchTmpfs(input.memoryBytes, { uid: WORKSPACE_UID, gid: WORKSPACE_GID }),
      Mounts: [
        { Type: "bind", Source: input.paths.homeDir, Target: WORKSPACE_DIR, ReadOnly: false },
        { Type: "bind", Source: input.paths.computerRunDir, Target: RUNTIME_DIR, ReadOnly: false },
        ...(usesEgressProxy(input.network)
          ? [{ Type: "bind" as const, Source: input.paths.egressDir, Target: EGRESS_DIR, ReadOnly: true }]
          : []),
      ],
    },
  };
}

/** The label filter that finds this computer's container(s). */
export function computerFilter(labelPrefix: string, computerId: string): { label: string[] } {
  return { label: [`${labelKeys(labelPrefix).computer}=${computerId}`] };
}
