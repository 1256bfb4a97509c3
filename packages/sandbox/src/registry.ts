/**
 * The typed provider registry: one factory per `ProviderKind` (the keys of @rakazo/config's
 * provider table). The map is checked against the kinds, so a kind without a factory, or a
 * factory without a kind, is a type error and an adapter cannot be half-added. Each factory's
 * parameter is its adapter's options; `ProviderConfig` is derived from them.
 */

import type { DesktopAdmissionSettings } from "./desktop-admission.ts";
import type { ProviderEventLog, ProviderKind, SandboxProvider } from "./provider.ts";
import { createFakeProvider, type FakeProviderOptions } from "./providers/fake/fake-provider.ts";

/**
 * Options of a remote adapter as data: the supervisor bundle by path (the worker and API read
 * it once and install it into each machine, CMP-8).
 */
export type RemoteProviderConfig<C> = Omit<C, "supervisorBundle"> & { readonly supervisorBundlePath: string };

function bundleReader(path: string): () => Promise<Uint8Array> {
  return async () => {
    const { readFile } = await import("node:fs/promises");
    return new Uint8Array(await readFile(path));
  };
}

/** Options of the Docker adapter, as the registry passes them through. */
export interface DockerProviderConfig {
  readonly image: string;
  readonly dataDir: string;
  readonly socketPath?: string;
  /** The OCI runtime computers run under (`runc` when unset; `runsc` is gVisor, docs/security.md). */
  readonly runtime?: string;
  readonly screenLimit?: number;
  /** The supervisor's desktop admission (CMP-5); unset fields keep its defaults. */
  readonly desktopAdmission?: DesktopAdmissionSettings;
  readonly memoryBytes?: number;
  readonly pidsLimit?: number;
  readonly nanoCpus?: number;
  /** Upstream network of computers' egress proxies; default `rakazo-egress`. */
  readonly egressNetwork?: string;
  /** Private CIDRs opened to computers' egress (default none). */
  readonly egressPrivateAllow?: readonly string[];
  /**
   * Each home on a disk of its own (providers/docker/home-disk.ts): `on` must work here, `auto`
   * where the worker's probe passes (home-disk-probe.ts). Unset: off.
   */
  readonly homeDisks?: "auto" | "on";
  /** Default size of a home's disk; a computer's own sizing wins. */
  readonly diskBytes?: number;
}

/** Options of the host adapter (PRV-6), as the registry passes them through. */
export interface HostProviderConfig {
  readonly dataDir: string;
  /** The staged supervisor bundle (`supervisor.mjs`). */
  readonly supervisorBundle: string;
  readonly screenLimit?: number;
  readonly displayBase?: number;
  readonly displayCount?: number;
}

/** What the process gives every provider beside its settings. */
export interface ProviderHooks {
  /**
   * Where the provider's events go; the runtime writes each as a log line (e.g. the refusals
   * docs/security.md promises, `docker.socket.refused`, `host.socket.refused`). Absent: dropped.
   */
  readonly log?: ProviderEventLog;
  /**
   * False in a process that works no jobs (the API): it leaves repairing what a crash left on the
   * host (Docker's home disks) to the worker, so two processes never mount one disk at once.
   */
  readonly repairs?: boolean;
}

/** A remote adapter's factory: its module loaded when selected, its bundle read from the path. */
function remote<C extends { readonly supervisorBundle: () => Promise<Uint8Array> }>(
  load: () => Promise<(config: C) => SandboxProvider>,
) {
  return async ({ supervisorBundlePath, ...config }: RemoteProviderConfig<C>) =>
    (await load())({ ...config, supervisorBundle: bundleReader(supervisorBundlePath) } as unknown as C);
}

// Adapters other than the fake are loaded lazily: each pulls in its own SDK (dockerode, e2b, …),
// needed only where that adapter is selected.
const factories = {
  fake: async (config: FakeProviderOptions) => createFakeProvider(config),
  docker: async (config: DockerProviderConfig, hooks: ProviderHooks) => {
    const { createSupervisedDockerProvider } = await import("./providers/docker/supervised.ts");
    const { resolveHomeDisks } = await import("./providers/docker/home-disk-probe.ts");
    const { homeDisks: setting, ...rest } = config;
    const homeDisks = await resolveHomeDisks(config, hooks);
    // Before the first job: a crash's leftovers released, every home's disk mounted again.
    if (homeDisks && hooks.repairs !== false)
      await (await import("./providers/docker/home-disk.ts")).settleHomeDisks(config.dataDir);
    return createSupervisedDockerProvider(
      homeDisks && setting ? { ...rest, homeDisks: setting } : rest,
      hooks,
    );
  },
  host: async (config: HostProviderConfig, hooks: ProviderHooks) => {
    const { createHostProvider } = await import("./providers/host/host-provider.ts");
    return createHostProvider({ ...config, ...(hooks.log ? { log: hooks.log } : {}) });
  },
  e2b: remote(async () => (await import("./providers/e2b-family/e2b.ts")).createE2BProvider),
  novita: remote(async () => (await import("./providers/e2b-family/novita.ts")).createNovitaProvider),
  daytona: remote(async () => (await import("./providers/daytona/daytona.ts")).createDaytonaProvider),
  boat: remote(async () => (await import("./providers/boat/boat.ts")).createBoatProvider),
} satisfies {
  readonly [K in ProviderKind]: (config: never, hooks: ProviderHooks) => Promise<SandboxProvider>;
};

type Factories = typeof factories;

/** What `createProvider` takes: the kind and that adapter's options. */
export type ProviderConfig = {
  [K in ProviderKind]: { readonly kind: K } & Parameters<Factories[K]>[0];
}[ProviderKind];

export function createProvider(config: ProviderConfig, hooks: ProviderHooks = {}): Promise<SandboxProvider> {
  const factory = factories[config.kind] as (c: ProviderConfig, h: ProviderHooks) => Promise<SandboxProvider>;
  return factory(config, hooks);
}
