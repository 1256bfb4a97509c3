/**
 * Pure builders for a computer's network policy under Docker (docs/security.md,
 * "Network"). The computer container keeps `NetworkMode: "none"` under EVERY policy: it has no
 * interface but `lo`, so it cannot address the host, other computers or metadata at all. Under
 * `egress` and `allowlist` its one way out is the egress proxy of its own, a second container
 * (egress-proxy/) on the deployment's upstream network, reached through a Unix socket in
 * `<runDir>/egress` that the computer mounts read-only; inside the computer the supervisor
 * relays 127.0.0.1:3128 to that socket, and browsers and tools are pointed at it.
 */
import { createHash } from "node:crypto";
import type Docker from "dockerode";
import type { NetworkPolicy } from "../../provider.ts";
import type { EgressRules } from "./egress-proxy/decide.ts";

/** Where the proxy's socket directory appears, in the computer (read-only) and in the proxy. */
export const EGRESS_DIR = "/run/rakazo-egress";
export const EGRESS_SOCKET = `${EGRESS_DIR}/proxy.sock`;
/** The in-computer relay's loopback listener (the supervisor's, see egress-relay.ts there). */
const EGRESS_LISTEN = "127.0.0.1:3128";
export const EGRESS_PROXY_URL = `http://${EGRESS_LISTEN}`;
/** The proxy runs as `nobody`, a uid no computer process has. */
export const EGRESS_PROXY_UID = 65534;
/** `<runDir>/egress`: host-made, owned by the proxy's uid; never writable by the computer. */
export const EGRESS_SIDE = "egress";
/** Where the proxy's sources (this folder's egress-proxy/) are mounted read-only. */
const EGRESS_SOURCE_DIR = "/opt/rakazo-egress";
export const DEFAULT_EGRESS_NETWORK = "rakazo-egress";
const EGRESS_MEMORY_BYTES = 128 * 1024 ** 2;
/**
 * Where the host-address watcher's file appears, in the watcher (read-write) and in every proxy
 * (read-only); the computer never mounts it. On the host: `<dataDir>/run/host-addresses`.
 */
export const HOST_ADDRESSES_DIR = "/run/rakazo-host";
export const HOST_ADDRESSES_SIDE = "host-addresses";
const WATCHER_MEMORY_BYTES = 64 * 1024 ** 2;
/**
 * Bumped when the proxy's or the watcher's container spec changes: a container made from an
 * older spec (e.g. a proxy without the watcher's file) is replaced at the next provision.
 */
export const EGRESS_SPEC = "3";

/** A label value that changes whenever the policy does: a container with another one is replaced. */
export function networkFingerprint(policy: NetworkPolicy | undefined): string {
  if (!policy || policy.mode === "none") return "none";
  const canonical = JSON.stringify({
    mode: policy.mode,
    allow: policy.mode === "allowlist" ? (policy.allow ?? []) : [],
  });
  return `${policy.mode}-${createHash("sha256").update(canonical).digest("hex").slice(0, 12)}`;
}

export function usesEgressProxy(policy: NetworkPolicy | undefined): boolean {
  return policy !== undefined && policy.mode !== "none";
}

/**
 * Environment of the computer under a policy: the relay's target for the supervisor, the browser
 * proxy, and the proxy variables command-line tools read (curl, git, gh, pip, npm; Node's own
 * fetch with NODE_USE_ENV_PROXY). Loopback stays direct: a bot's own dev server is not egress.
 */
export function computerNetworkEnv(policy: NetworkPolicy | undefined): Record<string, string> {
  if (!usesEgressProxy(policy)) return {};
  const noProxy = "localhost,127.0.0.1,::1";
  return {
    RAKAZO_EGRESS_SOCKET: EGRESS_SOCKET,
    RAKAZO_EGRESS_LISTEN: EGRESS_LISTEN,
    RAKAZO_BROWSER_PROXY: EGRESS_PROXY_URL,
    HTTP_PROXY: EGRESS_PROXY_URL,
    HTTPS_PROXY: EGRESS_PROXY_URL,
    http_proxy: EGRESS_PROXY_URL,
    https_proxy: EGRESS_PROXY_URL,
    NO_PROXY: noProxy,
    no_proxy: noProxy,
    NODE_USE_ENV_PROXY: "1",
  };
}

export interface EgressDeployment {
  /** CIDRs of private ranges the operator opens to every computer (default none). */
  readonly privateAllow: readonly string[];
  /** The host's own addresses: refused even inside `privateAllow`. */
  readonly hostDeny: readonly string[];
}

export function egressRules(policy: NetworkPolicy, deployment: EgressDeployment): EgressRules {
  if (policy.mode === "none") throw new Error("no egress rules under network mode none");
  return {
    mode: policy.mode,
    allow: policy.mode === "allowlist" ? (policy.allow ?? []) : [],
    privateAllow: [...deployment.privateAllow],
    hostDeny: [...deployment.hostDeny],
  };
}

export interface EgressProxySpecInput {
  readonly name: string;
  readonly image: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly rules: EgressRules;
  /** The upstream Docker network (the deployment's; a test's `--internal` one in tests). */
  readonly network: string;
  /** Host path of egress-proxy/ (mounted read-only). */
  readonly sourceDir: string;
  /** Host path of `<runDir>/egress`. */
  readonly socketDir: string;
  /** Host path of the host-address watcher's directory (mounted read-only). */
  readonly hostAddressesDir: string;
}

export function egressProxyCreateOptions(input: EgressProxySpecInput): Docker.ContainerCreateOptions {
  return {
    name: input.name,
    Image: input.image,
    // The image's tini reaps and forwards signals, as for the computer.
    Entrypoint: ["/usr/bin/tini", "--", "/usr/local/bin/node"],
    Cmd: [`${EGRESS_SOURCE_DIR}/main.ts`],
    User: `${EGRESS_PROXY_UID}:${EGRESS_PROXY_UID}`,
    WorkingDir: "/",
    Env: [
      `RAKAZO_EGRESS_SOCKET=${EGRESS_SOCKET}`,
      `RAKAZO_EGRESS_RULES=${JSON.stringify(input.rules)}`,
      `RAKAZO_HOST_ADDRESSES=${HOST_ADDRESSES_DIR}/addresses.json`,
    ],
    Labels: { ...input.labels },
    HostConfig: {
      NetworkMode: input.network,
      Memory: EGRESS_MEMORY_BYTES,
      MemorySwap: EGRESS_MEMORY_BYTES,
      NanoCpus: 500_000_000,
      PidsLimit: 64,
      ReadonlyRootfs: true,
      CapDrop: ["ALL"],
      SecurityOpt: ["no-new-privileges"],
      RestartPolicy: { Name: "no" },
      Init: false,
      Mounts: [
        { Type: "bind", Source: input.sourceDir, Target: EGRESS_SOURCE_DIR, ReadOnly: true },
        { Type: "bind", Source: input.socketDir, Target: EGRESS_DIR, ReadOnly: false },
        { Type: "bind", Source: input.hostAddressesDir, Target: HOST_ADDRESSES_DIR, ReadOnly: true },
      ],
    },
  };
}

export interface HostWatcherSpecInput {
  readonly name: string;
  readonly image: string;
  readonly labels: Readonly<Record<string, string>>;
  /** Host path of egress-proxy/ (mounted read-only). */
  readonly sourceDir: string;
  /** Host path of `<dataDir>/run/host-addresses`, owned by the watcher's uid. */
  readonly hostAddressesDir: string;
}

/**
 * The host-address watcher: one per data dir, in the HOST's network namespace, the only place
 * the host's interfaces can be read. It opens no socket and takes no input from any computer:
 * it reads /proc/net and rewrites one file. Restarted by the engine if it fails; not when the
 * engine itself restarts (it exits 0 on SIGTERM), since no proxy comes back then either: the
 * next provision starts it again.
 */
export function hostWatcherCreateOptions(input: HostWatcherSpecInput): Docker.ContainerCreateOptions {
  return {
    name: input.name,
    Image: input.image,
    Entrypoint: ["/usr/bin/tini", "--", "/usr/local/bin/node"],
    Cmd: [`${EGRESS_SOURCE_DIR}/host-watch.ts`],
    User: `${EGRESS_PROXY_UID}:${EGRESS_PROXY_UID}`,
    WorkingDir: "/",
    Env: [`RAKAZO_HOST_ADDRESSES_DIR=${HOST_ADDRESSES_DIR}`],
    Labels: { ...input.labels },
    HostConfig: {
      NetworkMode: "host",
      Memory: WATCHER_MEMORY_BYTES,
      MemorySwap: WATCHER_MEMORY_BYTES,
      NanoCpus: 100_000_000,
      PidsLimit: 16,
      ReadonlyRootfs: true,
      CapDrop: ["ALL"],
      SecurityOpt: ["no-new-privileges"],
      RestartPolicy: { Name: "on-failure" },
      Init: false,
      Mounts: [
        { Type: "bind", Source: input.sourceDir, Target: EGRESS_SOURCE_DIR, ReadOnly: true },
        { Type: "bind", Source: input.hostAddressesDir, Target: HOST_ADDRESSES_DIR, ReadOnly: false },
      ],
    },
  };
}

/**
 * A shell loop (run in the computer) that waits until the relay listens on EGRESS_LISTEN, read
 * from /proc/net/tcp: the supervisor starts it a moment after the container starts, and the
 * first command after provision must already find its way out.
 */
export function relayReadyArgv(timeoutSeconds: number): string[] {
  const port = Number(EGRESS_LISTEN.split(":")[1]).toString(16).toUpperCase().padStart(4, "0");
  const tries = Math.max(1, Math.round(timeoutSeconds * 10));
  return [
    "sh",
    "-c",
    `i=0; while [ $i -lt ${tries} ]; do grep -q ':${port} 00000000:0000 0A' /proc/net/tcp && exit 0; i=$((i+1)); sleep 0.1; done; exit 1`,
  ];
}
