import { join } from "node:path";
import { createProvider, type ProviderKind, type SandboxProvider } from "@rakazo/sandbox";
import { ConfigError, type RuntimeEnv } from "./env.ts";

/** Mirrors `@rakazo/services`' SizingPolicy (config does not depend on services). */
export interface SizingPolicy {
  readonly defaults: { readonly memoryMib: number; readonly cpus: number; readonly pids: number };
  readonly max: { readonly memoryMib: number; readonly cpus: number; readonly pids: number };
}

/**
 * Builds the configured provider. `auto` must be resolved to a concrete kind before this is
 * called (the launcher does it once, so API and worker always agree).
 */
export function providerFromEnv(env: RuntimeEnv, kind: ProviderKind): Promise<SandboxProvider> {
  switch (kind) {
    case "fake":
      return createProvider({
        kind: "fake",
        rootDir: join(env.DATA_DIR, "fake-computers"),
        screenLimit: env.SANDBOX_TEAM_SCREEN_LIMIT,
      });
    case "docker":
      return createProvider({
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
      });
  }
}

/** `auto` without a resolution falls back to the fake provider. */
export function concreteProviderKind(env: RuntimeEnv): ProviderKind {
  return env.RAKAZO_PROVIDER === "auto" ? "fake" : env.RAKAZO_PROVIDER;
}

/** Deployment defaults and maxima for computer sizes (issue 12); checked by `computer/create`. */
export function sizingFromEnv(env: RuntimeEnv): SizingPolicy {
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
