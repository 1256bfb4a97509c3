// The stack's lifecycle owns its computers: the real worker process (apps/worker/src/main.ts)
// on a real Postgres with the Docker provider. SIGTERM — what `docker compose stop/down` and the
// launcher send — checkpoints and stops every running computer and releases its machine: the
// state says stopped, a new checkpoint exists, no container of the data dir is left (computer,
// proxy or watcher). Start then brings a computer back on a new container. SIGUSR2 (`./rakazo
// stop --keep-computers`) leaves a running computer running. Measures a clean stop of 1 and
// of 3 computers (bench figures "stack-shutdown"). Computers run with networking off.
import { execFile } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { computerOperations, computers } from "@rakazo/db";
import { createProvider } from "@rakazo/sandbox";
import { listDeploymentContainers } from "@rakazo/sandbox/docker";
import { eq, inArray } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COMPUTER_IMAGE } from "../support/docker.ts";
import { recordFigures } from "../support/figures.ts";
import { type Child, killHard, startChild } from "../support/processes.ts";
import { createTestSystem, eventually, type TestSystem } from "../support/system.ts";
import { requireDocker } from "../support/tools.ts";

// Skips only locally without an engine or image; fails under CI=true (tests/support/tools.ts).
const gate = await requireDocker("the stack's shutdown stops its Docker computers");
const run = promisify(execFile);

describe.skipIf(gate.skip)(gate.title, () => {
  let system: TestSystem;
  let tenant: Awaited<ReturnType<TestSystem["newTenant"]>>;
  const children: Child[] = [];

  /** The real worker process on the test's database and data dir, once it says it started. */
  async function startRealWorker(): Promise<Child> {
    const child = startChild("apps/worker/src/main.ts", {
      DATABASE_URL: system.database.url,
      DATA_DIR: system.dataDir,
      RAKAZO_PROVIDER: "docker",
      RAKAZO_COMPUTER_IMAGE: COMPUTER_IMAGE,
      // Homes on the shared filesystem: the temp DATA_DIR goes with one rm (home disks: home-disk-probe.docker.test.ts).
      RAKAZO_DOCKER_HOME_DISKS: "off",
      COMPUTER_NETWORK: "none",
      WORKER_POLL_SECONDS: "0.5",
      LOG_LEVEL: "info",
    });
    children.push(child);
    await eventually(async () => {
      if (child.process.exitCode !== null) throw new Error(`worker exited early:\n${child.output.join("")}`);
      return child.output.join("").includes('"msg":"worker.started"') || undefined;
    }, 60_000);
    return child;
  }

  /** Signals the worker and waits for its exit; returns its JSON log records. */
  async function signalWorker(child: Child, signal: NodeJS.Signals): Promise<Record<string, any>[]> {
    const exited = new Promise<number | null>((done) => child.process.once("exit", (code) => done(code)));
    child.process.kill(signal);
    expect(await exited).toBe(0);
    return child.output
      .join("")
      .split("\n")
      .flatMap((line) => {
        try {
          return [JSON.parse(line) as Record<string, any>];
        } catch {
          return [];
        }
      });
  }

  const rows = (ids: string[]) => system.ctx.db.select().from(computers).where(inArray(computers.id, ids));

  async function running(ids: string[]): Promise<void> {
    await eventually(async () => {
      const found = await rows(ids);
      const failed = found.find((row) => row.state === "failed");
      if (failed) throw new Error(`computer failed: ${failed.lastError}`);
      return found.every((row) => row.state === "running") || undefined;
    }, 120_000);
  }

  async function create(count: number): Promise<string[]> {
    const client = system.client(tenant.token);
    const ids: string[] = [];
    for (let i = 0; i < count; i += 1) {
      const made = await client.call("computer/create", {
        spaceId: tenant.spaceId,
        size: { memoryMib: 1024, cpus: 0.5 },
      });
      ids.push(made.id);
    }
    return ids;
  }

  const dataDirContainers = () => listDeploymentContainers({ dataDir: system.dataDir });

  beforeAll(async () => {
    system = await createTestSystem({
      provider: (dataDir) => createProvider({ kind: "docker", image: COMPUTER_IMAGE, dataDir }),
    });
    tenant = await system.newTenant("shutdown-user");
  }, 180_000);

  afterAll(async () => {
    for (const child of children) await killHard(child);
    if (system) {
      // Whatever a failed assertion left: only this data dir's containers.
      const left = await dataDirContainers().catch(() => []);
      for (const container of left) {
        await run("docker", ["rm", "-f", container.containerId]).catch(() => {});
      }
      await system.close();
    }
  }, 120_000);

  it("SIGTERM checkpoints and stops 1, then 3 running computers, leaving no container; Start works", async () => {
    const figures: { name: string; value: number; unit: string }[] = [];
    let ids: string[] = [];
    for (const count of [1, 3]) {
      const worker = await startRealWorker();
      if (count === 3) {
        // The one stopped before comes back on a new container, beside two new ones.
        await system.client(tenant.token).call("computer/start", { computerId: ids[0] as string });
      }
      ids = [...ids, ...(await create(count - ids.length))];
      await running(ids);
      const before = await rows(ids);
      const labelled = await dataDirContainers();
      // Every computer container carries its deployment's data dir label.
      expect(
        labelled
          .filter((c) => c.role === "computer" && c.state === "running")
          .map((c) => c.computerId)
          .sort(),
      ).toEqual([...ids].sort());
      for (const row of before) {
        // Something new in each workspace, so the stop's checkpoint has a revision to make.
        await writeFile(
          join(system.dataDir, "homes", row.homeKey, `note-${count}.txt`),
          `before stop ${count}\n`,
        );
      }

      const records = await signalWorker(worker, "SIGTERM");
      const done = records.find((r) => r.msg === "worker.computers_stopped");
      expect(done, JSON.stringify(records.filter((r) => r.level >= 40))).toMatchObject({ stopped: count });
      figures.push({
        name: `clean stop of ${count} running Docker computer(s)`,
        value: done?.ms,
        unit: "ms",
      });

      const after = await rows(ids);
      for (const row of after) {
        const was = before.find((b) => b.id === row.id);
        expect(row.state, row.id).toBe("stopped");
        expect(row.providerRef, row.id).toBeNull();
        expect(row.homeRevision, row.id).toBeGreaterThan(was?.homeRevision ?? 0);
      }
      const ops = await system.ctx.db
        .select()
        .from(computerOperations)
        .where(inArray(computerOperations.computerId, ids));
      expect(ops.filter((o) => o.kind === "stop" && o.status === "succeeded").length).toBeGreaterThanOrEqual(
        count,
      );
      expect(await dataDirContainers()).toEqual([]);
    }
    recordFigures(
      "stack-shutdown",
      figures.map((f) => ({
        ...f,
        target: "inside the worker's 30 s stop_grace_period",
        better: "lower" as const,
      })),
    );

    // Start after the shutdown: a new container with the same workspace.
    const worker = await startRealWorker();
    const first = ids[0] as string;
    await system.client(tenant.token).call("computer/start", { computerId: first });
    await running([first]);
    const [row] = await system.ctx.db.select().from(computers).where(eq(computers.id, first));
    const { stdout } = await run("docker", [
      "exec",
      row?.providerRef as string,
      "cat",
      "/home/user/rakazo-home/note-3.txt",
    ]);
    expect(stdout).toBe("before stop 3\n");

    // SIGUSR2: the worker goes, the computer stays running with its container.
    const records = await signalWorker(worker, "SIGUSR2");
    expect(records.some((r) => r.msg === "worker.computers_stopped")).toBe(false);
    const [kept] = await system.ctx.db.select().from(computers).where(eq(computers.id, first));
    expect(kept?.state).toBe("running");
    expect((await dataDirContainers()).map((c) => [c.computerId, c.state])).toEqual([[first, "running"]]);
  }, 600_000);
});
