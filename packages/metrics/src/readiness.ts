/**
 * Ready = the database answers AND every migration this build ships is applied. A process
 * whose schema is behind its code (a rolled-back database, a replica started before the
 * migrating one finished) is alive but must not take traffic yet.
 */
import { type Database, MIGRATIONS_FOLDER } from "@rakazo/db";
import { sql } from "drizzle-orm";
import { readMigrationFiles } from "drizzle-orm/migrator";

export type Readiness =
  | { readonly ready: true }
  | {
      readonly ready: false;
      readonly reason: "database_unreachable" | "migrations_pending";
      readonly message: string;
    };

/** The shipped migrations' timestamps: drizzle records each applied one by this `created_at`. */
let shipped: readonly number[] | undefined;
const shippedMigrations = (): readonly number[] =>
  (shipped ??= readMigrationFiles({ migrationsFolder: MIGRATIONS_FOLDER }).map((m) => m.folderMillis));

export async function readiness(db: Database): Promise<Readiness> {
  let applied: Set<number>;
  try {
    // The migrations table lives in its own schema; a database nobody migrated has none.
    const exists = await db.execute<{ present: boolean }>(
      sql`select to_regclass('drizzle.__drizzle_migrations') is not null as present`,
    );
    if (!exists[0]?.present) {
      const pending = shippedMigrations().length;
      return {
        ready: false,
        reason: "migrations_pending",
        message: `${pending} of ${pending} migrations are not applied`,
      };
    }
    const rows = await db.execute<{ created_at: string }>(
      sql`select created_at from drizzle.__drizzle_migrations`,
    );
    applied = new Set(rows.map((r) => Number(r.created_at)));
  } catch {
    // Whatever the driver said (refused, timed out, auth): the reason is enough for a probe,
    // and the error text may name the server.
    return { ready: false, reason: "database_unreachable", message: "the database does not answer" };
  }
  const missing = shippedMigrations().filter((when) => !applied.has(when)).length;
  if (missing > 0) {
    const message = `${missing} of ${shippedMigrations().length} migrations are not applied`;
    return { ready: false, reason: "migrations_pending", message };
  }
  return { ready: true };
}
