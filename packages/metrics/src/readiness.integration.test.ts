/**
 * Readiness against real Postgres: a migrated database is ready; a database nobody migrated,
 * one a migration short, and a server that does not answer are not, each with its reason.
 */
import { randomBytes } from "node:crypto";
import { createServer } from "node:net";
import { connectDatabase, migrateDatabase } from "@rakazo/db";
import { createTestDatabase, databaseUrl } from "@rakazo/db/testing";
import { sql } from "drizzle-orm";
import postgres from "postgres";
import { describe, expect, inject, it } from "vitest";
import { readiness } from "./readiness.ts";

describe("readiness", () => {
  it("is ready once every shipped migration is applied, not before", async () => {
    const admin = postgres(inject("testDatabaseAdminUrl"), { max: 1, onnotice: () => {} });
    const name = `rakazo_ready_${randomBytes(5).toString("hex")}`;
    await admin.unsafe(`create database ${name}`);
    const url = databaseUrl(inject("testDatabaseAdminUrl"), name);
    const handle = connectDatabase(url, { max: 1 });
    try {
      expect(await readiness(handle.db)).toMatchObject({ ready: false, reason: "migrations_pending" });
      await migrateDatabase(url);
      expect(await readiness(handle.db)).toEqual({ ready: true });
    } finally {
      await handle.close();
      await admin.unsafe(`drop database if exists ${name} with (force)`);
      await admin.end();
    }
  });

  it("names a missing migration as pending", async () => {
    const database = await createTestDatabase();
    try {
      await database.db.execute(
        // drizzle's own table, as its migrator writes it; the oldest row stands for any one.
        sql`delete from drizzle.__drizzle_migrations where id = (select min(id) from drizzle.__drizzle_migrations)`,
      );
      const state = await readiness(database.db);
      expect(state).toMatchObject({ ready: false, reason: "migrations_pending" });
      expect(state.ready === false && state.message).toMatch(/^1 of \d+ migrations are not applied$/);
    } finally {
      await database.drop();
    }
  });

  it("is not ready when the database does not answer", async () => {
    // A port that was free a moment ago: connecting to it is refused.
    const server = createServer();
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
    const { port } = server.address() as { port: number };
    await new Promise((done) => server.close(done));
    const handle = connectDatabase(`postgres://postgres@127.0.0.1:${port}/none`, { max: 1 });
    try {
      expect(await readiness(handle.db)).toEqual({
        ready: false,
        reason: "database_unreachable",
        message: "the database does not answer",
      });
    } finally {
      await handle.close();
    }
  });
});
