import { fileURLToPath } from "node:url";
import { sql as rawSql } from "drizzle-orm";
import { drizzle, type PostgresJsDatabase } from "drizzle-orm/postgres-js";
import { migrate } from "drizzle-orm/postgres-js/migrator";
import postgres from "postgres";
import * as schema from "./schema.ts";

export type Database = PostgresJsDatabase<typeof schema>;

export interface DatabaseHandle {
  readonly db: Database;
  close(): Promise<void>;
}

/** Migrations ship with the package, so they resolve from here, not from the process cwd. */
export const MIGRATIONS_FOLDER = fileURLToPath(new URL("../drizzle", import.meta.url));

// Any process may migrate at boot (API, worker, launcher, compose replicas): an advisory
// lock makes concurrent migrators wait for each other instead of racing.
const MIGRATION_LOCK = 727_101;

export async function migrateDatabase(url: string): Promise<void> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await sql`select pg_advisory_lock(${MIGRATION_LOCK})`;
    try {
      await migrate(drizzle(sql), {
        migrationsFolder: MIGRATIONS_FOLDER,
        migrationsTable: "__drizzle_migrations",
        migrationsSchema: "drizzle",
      });
    } finally {
      await sql`select pg_advisory_unlock(${MIGRATION_LOCK})`;
    }
  } finally {
    await sql.end();
  }
}

export function connectDatabase(url: string, options: { max?: number } = {}): DatabaseHandle {
  const sql = postgres(url, { max: options.max ?? 10, onnotice: () => {} });
  return { db: drizzle(sql, { schema }), close: () => sql.end() };
}

/** A round trip to the server, for health checks. */
export async function pingDatabase(db: Database): Promise<void> {
  await db.execute(rawSql`select 1`);
}
