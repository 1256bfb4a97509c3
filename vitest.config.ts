import { defineConfig } from "vitest/config";
import LongFirstSequencer from "./tests/setup/long-first.ts";

// Projects: `unit` needs nothing; `integration` needs the real Postgres (and Docker where a
// suite says so). Both run in the README's test command, first and two files at a time (on a
// 2-core machine vitest's default is one, which put them in one serial lane behind the Docker
// suites); each file has its own database clone and each host-desktop suite its own display range.
const SOLO = ["tests/docker/desktop-capacity.docker.test.ts"];
// The suites run a second time with computers under gVisor (RAKAZO_DOCKER_RUNTIME=runsc,
// docs/security.md): the provider contract, VER-4, the host boundary and the network policy.
// RAKAZO_TEST_RUNSC=0 leaves that run out (e.g. `pnpm vitest run <file>` while working on it).
const RUNSC = [
  "packages/sandbox/src/providers/docker/docker-provider.docker.test.ts",
  "infra/sandboxes/supervisor/src/desktops/team-desktops.docker.test.ts",
  "tests/docker/host-boundary.docker.test.ts",
  "tests/docker/network-policy.docker.test.ts",
];

export default defineConfig({
  test: {
    // Known-long Docker suites start first in their lanes (tests/setup/long-first.ts).
    sequence: { sequencer: LongFirstSequencer },
    projects: [
      {
        test: {
          name: "unit",
          include: ["{apps,packages,infra}/**/src/**/*.test.ts"],
          exclude: ["**/node_modules/**", "**/*.integration.test.ts", "**/*.docker.test.ts"],
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
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
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      {
        // Real containers and desktops, two files at a time once unit and integration are done:
        // much of a Docker suite's time is spent waiting (container starts, a 65 s command, a
        // page loading in a desktop), which the other lane fills. Each suite owns its display
        // range, labels and names, so two never collide.
        test: {
          name: "docker",
          include: ["{apps,packages,infra}/**/src/**/*.docker.test.ts", "tests/**/*.docker.test.ts"],
          exclude: ["**/node_modules/**", ...SOLO],
          globalSetup: ["tests/setup/postgres.ts", "apps/web/src/testing/build-app.ts"],
          testTimeout: 120_000,
          hookTimeout: 180_000,
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
        },
      },
      {
        // Suites that bound this process's own latency (timer drift, observe/exec at a limit)
        // run last and alone: a neighbour's load must not read as the computer stalling.
        test: {
          name: "docker-solo",
          include: SOLO,
          globalSetup: ["tests/setup/postgres.ts", "apps/web/src/testing/build-app.ts"],
          testTimeout: 120_000,
          hookTimeout: 180_000,
          maxWorkers: 1,
          sequence: { groupOrder: 2 },
        },
      },
      ...(process.env.RAKAZO_TEST_RUNSC === "0"
        ? []
        : [
            {
              // After the runc lanes: each suite's names and labels are its own, not per runtime.
              test: {
                name: "docker-runsc",
                include: RUNSC,
                env: { RAKAZO_DOCKER_RUNTIME: "runsc" },
                globalSetup: ["tests/setup/postgres.ts", "apps/web/src/testing/build-app.ts"],
                testTimeout: 180_000,
                hookTimeout: 240_000,
                maxWorkers: 2,
                sequence: { groupOrder: 3 },
              },
            },
          ]),
    ],
  },
});
