import { randomBytes } from "node:crypto";
/**
 * Test databases for the integration project: `tests/setup/postgres.ts` (the project's global
 * setup) migrates a template once per run and provides its name; each test file clones it.
 */
import postgres from "postgres";
import { inject } from "vitest";
import { connectDatabase, type Database, migrateDatabase } from "../client.ts";

declare module "vitest" {
  export interface ProvidedContext {
    testDatabaseAdminUrl: string;
    testDatabaseTemplate: string;
  }
}

/** `adminUrl` pointed at another database on the same server. */
export function databaseUrl(adminUrl: string, database: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

export interface TestDatabase {
  readonly url: string;
  readonly db: Database;
  /** Closes connections and drops the database. */
  drop(): Promise<void>;
}

/**
 * What the global setup provided; outside vitest (`pnpm bench`, `pnpm test:computer` reuse the
 * test systems) there is no template, so the database is migrated from nothing on the server of
 * TEST_DATABASE_URL (default: the test server on 127.0.0.1).
 */
function provided(): { adminUrl: string; template?: string } {
  try {
    return { adminUrl: inject("testDatabaseAdminUrl"), template: inject("testDatabaseTemplate") };
  } catch {
    return { adminUrl: process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres" };
  }
}

/** A fresh, migrated database cloned from the run's template (or migrated, outside vitest). */
export async function createTestDatabase(): Promise<TestDatabase> {
  const { adminUrl, template } = provided();
  const name = `rakazo_test_${template?.split("_").pop() ?? "bench"}_${randomBytes(5).toString("hex")}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`create database ${name}${template ? ` template ${template}` : ""}`);
  } finally {
    await admin.end();
  }
  const url = databaseUrl(adminUrl, name);
  if (!template) await migrateDatabase(url);
  const handle = connectDatabase(url, { max: 5 });
  return {
    url,
    db: handle.db,
    async drop() {
      await handle.close();
      const dropper = postgres(adminUrl, { max: 1, onnotice: () => {} });
      try {
        await dropper.unsafe(`drop database if exists ${name} with (force)`);
      } finally {
        await dropper.end();
      }
    },
  };
}
