import type { ApiTokenKind, Database } from "@rakazo/db";
import type { AgentHomeStore, KeyWrapper } from "@rakazo/homes";
import type { JobQueue } from "@rakazo/jobs";
import type { Logger } from "@rakazo/log";
import type { NetworkPolicy, PageBrowser, SandboxProvider } from "@rakazo/sandbox";
import type { SpaceQuotaPolicy } from "./computers/quota.ts";
import type { SizingPolicy } from "./computers/sizing.ts";
import type { RunHooks } from "./runs/runs.ts";
import type { ScreenServiceConfig } from "./screens/config.ts";

/** Everything a verb may touch, built once per process and passed in. */
export interface ServiceContext {
  readonly db: Database;
  readonly jobs: JobQueue;
  readonly provider: SandboxProvider;
  readonly log: Logger;
  /** Where workspaces are checkpointed (local, or object storage when configured; PER-3/4). */
  readonly homes: AgentHomeStore;
  /** Wraps space content keys with the master key (PER-5). */
  readonly keys: KeyWrapper;
  /** The agent model (`AGENT_MODEL`, e.g. `openrouter:<id>`); agent runs are refused without it. */
  readonly agentModel?: string;
  /** What happens around runs ending (checkpoints, capability revocation); optional. */
  readonly runHooks?: RunHooks;
  /** Screen capabilities (SCR-2, SCR-4): keys and the web service's public URL; optional. */
  readonly screens?: ScreenServiceConfig;
  /** Computer size defaults and maxima; DEFAULT_SIZING when absent. */
  readonly sizing?: SizingPolicy;
  /** Per-space quotas: computers, and memory and CPUs held at once; DEFAULT_SPACE_QUOTAS when absent. */
  readonly quotas?: SpaceQuotaPolicy;
  /** The network policy of computers whose creator names none (`COMPUTER_NETWORK`); `none` when absent. */
  readonly networkDefault?: NetworkPolicy;
  /** How long a first use of an unprovisioned Team Computer waits for its machine (CMP-1). */
  readonly firstUseWaitMs?: number;
  /** Page browsers for `BROWSER_PROVIDER=emulator` (BRW-7); only a test runtime supplies them. */
  readonly headlessBrowsers?: HeadlessPageBrowsers;
  /**
   * Fault injection for crash tests only (`RAKAZO_TEST_CRASH_AFTER`, parsed by the API app):
   * called right after an operation's row is committed and before its job is enqueued.
   */
  /** This worker process's id (`worker_heartbeats`); operations it claims carry it (OPS-5). */
  readonly workerId?: string;
  readonly faults?: {
    readonly afterOperationCommit?: () => void;
    /** Called right after an agent run's row is committed and before its job is enqueued. */
    readonly afterRunCommit?: () => void;
  };
}

/**
 * Headless browsers started by a test runtime, one session per computer and bot, separate from
 * any computer's live browser (BRW-7). Downloads go into the computer's workspace through `save`,
 * which returns the workspace-relative path.
 */
export interface HeadlessPageBrowsers {
  browserFor(computerRef: string, save: (name: string, data: Uint8Array) => Promise<string>): PageBrowser;
}

/** An authenticated user, as resolved from a bearer token. */
export interface Caller {
  readonly userId: string;
  readonly tokenId: string;
  /** The token's kind: a `web_session` is a person in the web app, an `api` token a script or the CLI. */
  readonly tokenKind?: ApiTokenKind;
}
