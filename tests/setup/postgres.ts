/**
 * Integration tests run against the real Postgres server (never a mock). Once per run this
 * creates a template database with every migration applied; each test file then clones it
 * (`CREATE DATABASE … TEMPLATE`, milliseconds) so files run in parallel without sharing rows.
 */
import { migrateDatabase } from "@rakazo/db";
import { databaseUrl } from "@rakazo/db/testing";
import postgres from "postgres";
import type { TestProject } from "vitest/node";

export const DEFAULT_ADMIN_URL = "postgres://postgres@127.0.0.1:5432/postgres";

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const adminUrl = process.env.TEST_DATABASE_URL ?? DEFAULT_ADMIN_URL;
  const template = `rakazo_test_template_${process.pid}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    await admin`select 1`;
  } catch (error) {
    await admin.end();
    throw new Error(
      `integration tests need Postgres at ${new URL(adminUrl).host} (set TEST_DATABASE_URL): ${(error as Error).message}`,
    );
  }
  await admin.unsafe(`drop database if exists ${template}`);
  await admin.unsafe(`create database ${template}`);
  await migrateDatabase(databaseUrl(adminUrl, template));
  project.provide("testDatabaseAdminUrl", adminUrl);
  project.provide("testDatabaseTemplate", template);
  return async () => {
    // Clones made by test files are dropped by their own fixtures; sweep leftovers of crashes.
    const leftovers = await admin<{ datname: string }[]>`
      select datname from pg_database where datname like ${`rakazo_test_${process.pid}_%`} or datname = ${template}`;
    for (const { datname } of leftovers)
      await admin.unsafe(`drop database if exists ${datname} with (force)`);
    await admin.end();
  };
}
