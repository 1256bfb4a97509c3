/**
 * The one composition root (ARCH-4): every process that runs domain verbs — the API, the
 * worker, and the test systems that stand in for them — gets its ServiceContext here, so what
 * a verb can reach never differs between them. Apps parse their own slice of the environment
 * (@rakazo/config) and hand the settings in; this builds the database handle, pg-boss, the
 * provider and the home store from them.
 */
import type { HomesSettings, ProviderSettings, SizingPolicy, SpaceQuotaPolicy } from "@rakazo/config";
import { connectDatabase, type Database, migrateDatabase } from "@rakazo/db";
import { type PgBossHandle, startPgBoss } from "@rakazo/jobs";
import type { Logger } from "@rakazo/log";
import type { SandboxProvider } from "@rakazo/sandbox";
import {
  type HeadlessPageBrowsers,
  type RunHooks,
  type ScreenServiceConfig,
  type ServiceContext,
  systemRunHooks,
} from "@rakazo/services";
import { type BuiltHomes, buildHomes } from "./build-homes.ts";
import { buildProvider } from "./build-provider.ts";

export interface RuntimeConfig {
  /**
   * Which process this is. Only the worker supervises pg-boss (maintenance, schedules); the
   * context is the same for both.
   */
  readonly role: "api" | "worker";
  readonly databaseUrl: string;
  /** An open connection to `databaseUrl` to use instead of opening one (not closed by `close`). */
  readonly db?: Database;
  /** Migrate before anything else (deployed processes; a test database is cloned migrated). */
  readonly migrate?: boolean;
  readonly log: Logger;
  /** Settings from the environment, or a provider a caller built (tests). */
  readonly provider: ProviderSettings | SandboxProvider;
  /** Settings from the environment, or a store and key wrapper a caller built (tests). */
  readonly homes: HomesSettings | BuiltHomes;
  readonly sizing?: SizingPolicy;
  /** Per-space quotas; DEFAULT_SPACE_QUOTAS (@rakazo/services) when absent. */
  readonly quotas?: SpaceQuotaPolicy;
  readonly agentModel?: string;
  readonly screens?: ScreenServiceConfig;
  readonly headlessBrowsers?: HeadlessPageBrowsers;
  /** Default: `systemRunHooks` (checkpoint and revoke control when a run ends). */
  readonly runHooks?: RunHooks;
  readonly firstUseWaitMs?: number;
  /** The network policy of new computers. */
  readonly networkDefault?: ServiceContext["networkDefault"];
  /** Crash tests only (OPS-4): where the process dies like a kill -9. */
  readonly faults?: ServiceContext["faults"];
  /** The worker's id for heartbeats and operation claims (OPS-5); workers only. */
  readonly workerId?: string;
}

export interface Runtime {
  readonly ctx: ServiceContext;
  readonly boss: PgBossHandle["boss"];
  readonly databaseUrl: string;
  /** Stops pg-boss (graceful: waits for jobs in flight up to `timeoutMs`), then the database. */
  close(options?: { graceful?: boolean; timeoutMs?: number }): Promise<void>;
}

export async function createRuntime(config: RuntimeConfig): Promise<Runtime> {
  const { log } = config;
  if (config.migrate) await migrateDatabase(config.databaseUrl);
  // Only the worker repairs the host's leftovers (home disks) at start.
  const provider: SandboxProvider = await buildProvider(config.provider, log, {
    repairs: config.role === "worker",
  });
  const homes = await buildHomes(config.homes, provider.capabilities);
  const owned = config.db ? undefined : connectDatabase(config.databaseUrl);
  const db = config.db ?? (owned as NonNullable<typeof owned>).db;
  let jobs: PgBossHandle;
  try {
    jobs = await startPgBoss(config.databaseUrl, {
      supervise: config.role === "worker",
      // Only the worker works jobs, so only it holds a LISTEN connection.
      listen: config.role === "worker",
      onError: (error) => log.error("pgboss.error", { error }),
      onWarning: (warning) => log.warn("pgboss.warning", warning),
    });
  } catch (error) {
    await owned?.close();
    throw error;
  }
  const ctx: ServiceContext = {
    db,
    jobs: jobs.queue,
    provider,
    log,
    homes: homes.store,
    keys: homes.keys,
    runHooks: config.runHooks ?? systemRunHooks,
    ...(config.sizing ? { sizing: config.sizing } : {}),
    ...(config.quotas ? { quotas: config.quotas } : {}),
    ...(config.agentModel ? { agentModel: config.agentModel } : {}),
    ...(config.screens ? { screens: config.screens } : {}),
    ...(config.headlessBrowsers ? { headlessBrowsers: config.headlessBrowsers } : {}),
    ...(config.firstUseWaitMs !== undefined ? { firstUseWaitMs: config.firstUseWaitMs } : {}),
    ...(config.networkDefault ? { networkDefault: config.networkDefault } : {}),
    ...(config.faults ? { faults: config.faults } : {}),
    ...(config.workerId ? { workerId: config.workerId } : {}),
  };
  let closed = false;
  return {
    ctx,
    boss: jobs.boss,
    databaseUrl: config.databaseUrl,
    async close({ graceful = true, timeoutMs = 10_000 } = {}) {
      if (closed) return;
      closed = true;
      await jobs.boss.stop({ graceful, timeout: timeoutMs });
      await owned?.close();
    },
  };
}
