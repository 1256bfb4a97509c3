import { randomBytes } from "node:crypto";
import { connectDatabase, type Database } from "@rakazo/db";
import postgres from "postgres";
import { inject } from "vitest";
import { databaseUrl } from "../setup/postgres.ts";

export interface TestDatabase {
  readonly url: string;
  readonly db: Database;
  /** Closes connections and drops the database. */
  drop(): Promise<void>;
}

/** A fresh, migrated database cloned from the run's template. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const adminUrl = inject("testDatabaseAdminUrl");
  const template = inject("testDatabaseTemplate");
  const name = `rakazo_test_${template.split("_").pop()}_${randomBytes(5).toString("hex")}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`create database ${name} template ${template}`);
  } finally {
    await admin.end();
  }
  const url = databaseUrl(adminUrl, name);
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
