/**
 * The API's queries are prepared statements: drizzle's unprepared queries cost
 * postgres.js a describe round trip each. Observed from the server: the session's named
 * statements in pg_prepared_statements, outside and inside a transaction.
 */
import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectDatabase, type DatabaseHandle } from "./client.ts";
import { users } from "./schema.ts";
import { createTestDatabase, type TestDatabase } from "./testing/database.ts";

let database: TestDatabase;
let handle: DatabaseHandle;

beforeAll(async () => {
  database = await createTestDatabase();
  // One connection, so the statement check below sees the session that ran the queries.
  handle = connectDatabase(database.url, { max: 1 });
});

afterAll(async () => {
  await handle?.close();
  await database?.drop();
});

async function preparedTexts(
  run: typeof handle.db | Parameters<Parameters<typeof handle.db.transaction>[0]>[0],
) {
  const rows = await run.execute<{ statement: string }>(sql`select statement from pg_prepared_statements`);
  return [...rows].map((r) => r.statement);
}

describe("connectDatabase", () => {
  it("prepares drizzle's queries, in and out of transactions", async () => {
    await handle.db.select().from(users).where(eq(users.id, "user_nobody"));
    expect((await preparedTexts(handle.db)).some((s) => s.includes('from "users"'))).toBe(true);
    await handle.db.transaction(async (tx) => {
      await tx.select({ name: users.name }).from(users).where(eq(users.name, "nobody"));
      const texts = await preparedTexts(tx);
      expect(texts.some((s) => s.includes('select "name" from "users"'))).toBe(true);
    });
  });
});
