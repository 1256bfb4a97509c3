/**
 * How operator commands reach the installation's database: `DATABASE_URL` when set; else the
 * embedded Postgres of DATA_DIR — the running one, or, when Rakazo is stopped, one started just
 * for the command (in its own process group) and stopped after it.
 */
import type { RuntimeEnv } from "@rakazo/config";
import { connectDatabase, type Database, migrateDatabase } from "@rakazo/db";
import type { Logger } from "@rakazo/log";
import { embeddedDatabaseUrl, startEmbeddedPostgres } from "../embedded-postgres.ts";
import { StartupError } from "../startup-error.ts";
import { alive, readState } from "../state.ts";

export async function withDatabase<T>(
  env: RuntimeEnv,
  log: Logger,
  use: (db: Database) => Promise<T>,
): Promise<T> {
  let url = env.DATABASE_URL;
  let stopEmbedded: (() => Promise<void>) | undefined;
  if (!url) {
    const state = readState(env.DATA_DIR);
    if (state?.postgres && alive(state.postgres.pid)) {
      url = await embeddedDatabaseUrl(env.DATA_DIR);
    } else if (await embeddedDatabaseUrl(env.DATA_DIR)) {
      const embedded = await startEmbeddedPostgres({
        dataDir: env.DATA_DIR,
        port: env.EMBEDDED_POSTGRES_PORT,
        log,
      });
      url = embedded.url;
      stopEmbedded = embedded.stop;
    }
  }
  if (!url) {
    throw new StartupError(`no Rakazo installation in ${env.DATA_DIR} yet: run ./rakazo start first`);
  }
  try {
    await migrateDatabase(url);
    const database = connectDatabase(url, { max: 2 });
    try {
      return await use(database.db);
    } finally {
      await database.close();
    }
  } finally {
    await stopEmbedded?.();
  }
}
