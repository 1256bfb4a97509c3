import { defineConfig } from "vitest/config";

// Projects: `unit` needs nothing; `integration` needs the real Postgres (and Docker where a
// suite says so). Both run in the README's test command.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          include: ["{apps,packages,infra}/**/src/**/*.test.ts"],
          exclude: ["**/node_modules/**", "**/*.integration.test.ts", "**/*.docker.test.ts"],
        },
      },
      {
        test: {
          name: "integration",
          include: ["{apps,packages,infra}/**/src/**/*.integration.test.ts", "tests/**/*.test.ts"],
          exclude: ["**/node_modules/**", "**/*.docker.test.ts"],
          globalSetup: ["tests/setup/postgres.ts", "apps/web/src/testing/build-app.ts"],
          setupFiles: ["tests/setup/log-secrets.ts"],
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
      {
        test: {
          name: "docker",
          include: ["{apps,packages,infra}/**/src/**/*.docker.test.ts", "tests/**/*.docker.test.ts"],
          exclude: ["**/node_modules/**"],
          globalSetup: ["tests/setup/postgres.ts", "apps/web/src/testing/build-app.ts"],
          testTimeout: 120_000,
          hookTimeout: 180_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
