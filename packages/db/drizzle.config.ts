import { defineConfig } from "drizzle-kit";

// Only `drizzle-kit generate` uses this file; it needs no database.
export default defineConfig({
  dialect: "postgresql",
  schema: "./src/schema.ts",
  out: "./drizzle",
  migrations: { table: "__drizzle_migrations", schema: "drizzle" },
  strict: true,
});
