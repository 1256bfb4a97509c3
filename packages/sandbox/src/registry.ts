/**
 * The typed provider registry: one factory per `ProviderKind`. A kind without a factory is a
 * type error, so an adapter cannot be half-added.
 */

import type { ProviderEventLog, ProviderKind, SandboxProvider } from "./provider.ts";
import type { BoatProviderConfig } from "./providers/boat/boat.ts";
import type { DaytonaProviderConfig } from "./providers/daytona/daytona.ts";
import type { E2BProviderConfig } from "./providers/e2b-family/e2b.ts";
import type { NovitaProviderConfig } from "./providers/e2b-family/novita.ts";
import type { FakeProviderOptions } from "./providers/fake/fake-provider.ts";
import { createFakeProvider } from "./providers/fake/fake-provider.ts";

interface ProviderConfigs {
  fake: FakeProviderOptions;
  docker: DockerProviderConfig;
  host: HostProviderConfig;
  e2b: RemoteProviderConfig<E2BProviderConfig>;
  novita: RemoteProviderConfig<NovitaProviderConfig>;
  daytona: RemoteProviderConfig<DaytonaProviderConfig>;
  boat: RemoteProviderConfig<BoatProviderConfig>;
}

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
  readonly screenLimit?: number;
  readonly memoryBytes?: number;
  readonly pidsLimit?: number;
  readonly nanoCpus?: number;
  /** Upstream network of computers' egress proxies (issue 16); default `rakazo-egress`. */
  readonly egressNetwork?: string;
  /** Private CIDRs opened to computers' egress (default none). */
  readonly egressPrivateAllow?: readonly string[];
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

export type ProviderConfig = { [K in ProviderKind]: { kind: K } & ProviderConfigs[K] }[ProviderKind];

/** What the process gives every provider beside its settings. */
export interface ProviderHooks {
  /**
   * Where the provider's events go; the runtime writes each as a log line (e.g. the refusals
   * docs/security.md promises, `docker.socket.refused`, `host.socket.refused`). Absent: dropped.
   */
  readonly log?: ProviderEventLog;
}

type Factories = {
  [K in ProviderKind]: (config: ProviderConfigs[K], hooks: ProviderHooks) => Promise<SandboxProvider>;
};

const factories: Factories = {
  fake: async (config) => createFakeProvider(config),
  docker: async (config, hooks) => {
    // Loaded lazily: dockerode is only needed where the Docker adapter is selected.
    const { createSupervisedDockerProvider } = await import("./providers/docker/supervised.ts");
    return createSupervisedDockerProvider(config, hooks);
  },
  host: async (config, hooks) => {
    const { createHostProvider } = await import("./providers/host/host-provider.ts");
    return createHostProvider({ ...config, ...(hooks.log ? { log: hooks.log } : {}) });
  },
  e2b: async ({ supervisorBundlePath, ...config }) => {
    const { createE2BProvider } = await import("./providers/e2b-family/e2b.ts");
    return createE2BProvider({ ...config, supervisorBundle: bundleReader(supervisorBundlePath) });
  },
  novita: async ({ supervisorBundlePath, ...config }) => {
    const { createNovitaProvider } = await import("./providers/e2b-family/novita.ts");
    return createNovitaProvider({ ...config, supervisorBundle: bundleReader(supervisorBundlePath) });
  },
  daytona: async ({ supervisorBundlePath, ...config }) => {
    const { createDaytonaProvider } = await import("./providers/daytona/daytona.ts");
    return createDaytonaProvider({ ...config, supervisorBundle: bundleReader(supervisorBundlePath) });
  },
  boat: async ({ supervisorBundlePath, ...config }) => {
    const { createBoatProvider } = await import("./providers/boat/boat.ts");
    return createBoatProvider({ ...config, supervisorBundle: bundleReader(supervisorBundlePath) });
  },
};

export function createProvider(config: ProviderConfig, hooks: ProviderHooks = {}): Promise<SandboxProvider> {
  const factory = factories[config.kind] as (c: ProviderConfig, h: ProviderHooks) => Promise<SandboxProvider>;
  return factory(config, hooks);
}
