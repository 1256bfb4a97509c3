import { join } from "node:path";
import { createProvider, type ProviderKind, type SandboxProvider } from "@rakazo/sandbox";
import type { RuntimeEnv } from "./env.ts";

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
      });
  }
}

/** `auto` without a resolution falls back to the fake provider. */
export function concreteProviderKind(env: RuntimeEnv): ProviderKind {
  return env.RAKAZO_PROVIDER === "auto" ? "fake" : env.RAKAZO_PROVIDER;
}
