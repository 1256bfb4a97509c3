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
  return { db: drizzle(preparedStatements(sql), { schema }), close: () => sql.end() };
}

/**
 * Drizzle runs every query through `sql.unsafe(text, params, { prepare: false })`, and for an
 * unprepared query with parameters postgres.js first describes the statement and waits for the
 * answer before binding it: two round trips per query and no pipelining. That was the largest
 * part of the API's per-request cost (`pnpm bench --only api`). This hands drizzle the
 * same client with its queries prepared — postgres.js keeps one named statement per query text
 * and connection, re-prepares on "cached plan must not change result type", and connections
 * are recycled by `max_lifetime` — inside transactions and savepoints too. Statement-less
 * texts (no parameters) keep the simple protocol, as before.
 */
function preparedStatements<T extends object>(sql: T): T {
  // The three entry points drizzle uses; typed loosely because a transaction's client is a
  // different type from the pool's, and each is handed back wrapped the same way.
  type Scoped = (scope: object) => unknown;
  const client = sql as unknown as {
    unsafe(text: string, params?: unknown[], options?: Record<string, unknown>): unknown;
    begin(first: string | Scoped, then?: Scoped): unknown;
    savepoint(scope: Scoped): unknown;
  };
  return new Proxy(sql, {
    get(target, key, receiver) {
      if (key === "unsafe") {
        return (text: string, params: unknown[] = [], options: Record<string, unknown> = {}) =>
          client.unsafe(text, params, { ...options, prepare: true });
      }
      if (key === "begin") {
        return (first: string | Scoped, then?: Scoped) =>
          typeof first === "function"
            ? client.begin((tx) => first(preparedStatements(tx)))
            : client.begin(first, (tx) => (then as Scoped)(preparedStatements(tx)));
      }
      if (key === "savepoint" && "savepoint" in target) {
        return (scope: Scoped) => client.savepoint((sp) => scope(preparedStatements(sp)));
      }
      return Reflect.get(target, key, receiver);
    },
  });
}

/** A round trip to the server, for health checks. */
export async function pingDatabase(db: Database): Promise<void> {
  await db.execute(rawSql`select 1`);
}

/**
 * A query built once per database handle instead of on every call (drizzle's `.prepare()`):
 * for the few statements every request runs (the token lookup, the computer access check),
 * building the SQL text each time was a tenth of the API's CPU.
 */
export function builtOnce<Q>(build: (db: Database) => Q): (db: Database) => Q {
  const built = new WeakMap<Database, Q>();
  return (db) => {
    let query = built.get(db);
    if (query === undefined) {
      query = build(db);
      built.set(db, query);
    }
    return query;
  };
}

/** postgres.js's own codes for a connection that is gone or could not be made. */
const CONNECTION_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "CONNECT_TIMEOUT",
]);

/**
 * Whether `error` (or a cause of it: drizzle wraps the driver's error) says the database could
 * not be reached — refused, dropped, shutting down (57P01–57P03) or a class-08 connection
 * failure — rather than that a query was wrong. Such a request can be retried once the server
 * is back; the API answers it 503 `DATABASE_UNAVAILABLE`.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let current = error, depth = 0; current && depth < 8; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && (CONNECTION_CODES.has(code) || /^(57P0[1-3]|08...)$/.test(code))) {
      return true;
    }
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}
