/**
 * The settings API and worker derive from their environment slices. Both call this with the
 * variables they share (`ServicesEnv`), so for one environment they build the same context.
 */
import {
  homesSettings,
  providerSettings,
  requireDatabaseUrl,
  type ServicesEnv,
  sizingFromEnv,
  spaceQuotasFromEnv,
} from "@rakazo/config";
import type { Logger } from "@rakazo/log";
import type { RuntimeConfig } from "./create-runtime.ts";

export function runtimeConfigFromEnv(
  env: ServicesEnv,
  options: { role: RuntimeConfig["role"]; log: Logger },
): RuntimeConfig {
  return {
    role: options.role,
    log: options.log,
    databaseUrl: requireDatabaseUrl(env),
    migrate: true,
    provider: providerSettings(env),
    homes: homesSettings(env),
    sizing: sizingFromEnv(env),
    quotas: spaceQuotasFromEnv(env),
    networkDefault: { mode: env.COMPUTER_NETWORK },
    ...(env.AGENT_MODEL ? { agentModel: env.AGENT_MODEL } : {}),
  };
}
