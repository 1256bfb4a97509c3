import type { Database } from "@rakazo/db";
import type { JobQueue } from "@rakazo/jobs";
import type { Logger } from "@rakazo/log";
import type { SandboxProvider } from "@rakazo/sandbox";

/** Everything a verb may touch, built once per process and passed in. */
export interface ServiceContext {
  readonly db: Database;
  readonly jobs: JobQueue;
  readonly provider: SandboxProvider;
  readonly log: Logger;
}

/** An authenticated user, as resolved from a bearer token. */
export interface Caller {
  readonly userId: string;
  readonly tokenId: string;
}
