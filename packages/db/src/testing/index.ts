export { createTestDatabase, databaseUrl, type TestDatabase } from "./database.ts";
