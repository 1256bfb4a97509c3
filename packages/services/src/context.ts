import type { Database } from "@rakazo/db";
import type { JobQueue } from "@rakazo/jobs";
import type { Logger } from "@rakazo/log";
import type { SandboxProvider } from "@rakazo/sandbox";
import type { RunHooks } from "./runs/runs.ts";

/** Everything a verb may touch, built once per process and passed in. */
export interface ServiceContext {
  readonly db: Database;
  readonly jobs: JobQueue;
  readonly provider: SandboxProvider;
  readonly log: Logger;
  /** What happens around runs ending (checkpoints, capability revocation); optional. */
  readonly runHooks?: RunHooks;
}

/** An authenticated user, as resolved from a bearer token. */
export interface Caller {
  readonly userId: string;
  readonly tokenId: string;
}
