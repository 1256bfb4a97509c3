// The launcher's stop owns its computers, on the real launcher with the Docker provider:
// `./rakazo stop --keep-computers` leaves a running computer running and `./rakazo status` then
// lists it (found by its data dir label) with how to stop it; Ctrl-C on the next start
// checkpoints and stops it and leaves no container; after a start, Start brings it back and a
// plain `./rakazo stop` stops it again. Computers run with networking off.
import { execFile } from "node:child_process";
import { rm } from "node:fs/promises";
import { promisify } from "node:util";
import { listDeploymentContainers } from "@rakazo/sandbox/docker";
import { COMPUTER_IMAGE, requireDocker } from "@rakazo/sandbox/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  launcherEnv,
  type RunningLauncher,
  runCli,
  spawnLauncher,
  stopLaunchers,
  tempDataDir,
} from "./testing/launcher-process.ts";

// Skips only locally without an engine or image; fails under CI=true.
const gate = await requireDocker("the launcher's stop and the computers it runs");
const run = promisify(execFile);

describe.skipIf(gate.skip)(gate.title, () => {
  let dataDir: string;
  let env: Record<string, string>;
  let api: string;

  const rpc = async (method: string, body: unknown, token?: string) => {
    const res = await fetch(`${api}/rpc/${method}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
    });
    return { status: res.status, json: (await res.json()) as any };
  };

  async function start(): Promise<RunningLauncher> {
    const launcher = spawnLauncher(env);
    await launcher.waitFor(
      () => launcher.records().some((r) => r.msg === "launcher.ready"),
      120_000,
      "ready",
    );
    return launcher;
  }

  async function until(state: string, computerId: string, token: string): Promise<void> {
    const deadline = Date.now() + 120_000;
    for (;;) {
      const got = await rpc("computer/get", { computerId }, token);
      if (got.json.result?.state === state) return;
      if (got.json.result?.state === "failed") throw new Error(`failed: ${got.json.result.lastError}`);
      if (Date.now() > deadline) throw new Error(`computer never ${state}: ${JSON.stringify(got.json)}`);
      await new Promise((done) => setTimeout(done, 300));
    }
  }

  const computersOfDataDir = async () =>
    (await listDeploymentContainers({ dataDir })).map((c) => ({
      id: c.computerId,
      role: c.role,
      state: c.state,
    }));

  beforeAll(async () => {
    dataDir = await tempDataDir();
    env = await launcherEnv(dataDir, {
      RAKAZO_PROVIDER: "docker",
      RAKAZO_COMPUTER_IMAGE: COMPUTER_IMAGE,
      // Homes on the shared filesystem: the temp DATA_DIR goes with one rm (home disks: home-disk-probe.docker.test.ts).
      RAKAZO_DOCKER_HOME_DISKS: "off",
    });
    api = `http://127.0.0.1:${env.API_PORT}`;
  });

  afterAll(async () => {
    await stopLaunchers();
    // Only this data dir's containers, whatever a failed assertion left.
    for (const c of await listDeploymentContainers({ dataDir }).catch(() => [])) {
      await run("docker", ["rm", "-f", c.containerId]).catch(() => {});
    }
    await rm(dataDir, { recursive: true, force: true });
  }, 120_000);

  it("--keep-computers leaves it running and status lists it; Ctrl-C and stop stop it", async () => {
    let launcher = await start();
    const setup = await rpc("setup/bootstrap", { userName: "ops", spaceName: "S", botName: "B" });
    expect(setup.status).toBe(200);
    const token = setup.json.result.token as string;
    const created = await rpc(
      "computer/create",
      { spaceId: setup.json.result.spaceId, size: { memoryMib: 1024, cpus: 0.5 } },
      token,
    );
    expect(created.status).toBe(200);
    const computerId = created.json.result.id as string;
    await until("running", computerId, token);

    // Stop, keeping computers: the container stays up, and status names it.
    const kept = await runCli(env, ["stop", "--keep-computers"]);
    expect(kept.code, kept.stderr).toBe(0);
    expect(kept.stdout).toContain("computers left running");
    expect(await launcher.exited).toBe(0);
    expect(await computersOfDataDir()).toEqual([{ id: computerId, role: "computer", state: "running" }]);
    const status = await runCli(env, ["status"]);
    expect(status.code).toBe(3);
    expect(status.stdout).toContain("Rakazo is not running");
    expect(status.stdout).toContain("1 computer(s) still running without a control plane");
    expect(status.stdout).toContain(computerId);
    expect(status.stdout).toContain("./rakazo start, then ./rakazo stop");

    // The next start finds it running; Ctrl-C stops it with the system: checkpoint, no container.
    launcher = await start();
    await until("running", computerId, token);
    launcher.ctrlC();
    expect(await launcher.exited).toBe(0);
    expect(launcher.records().find((r) => r.msg === "worker.computers_stopped")).toMatchObject({
      stopped: 1,
    });
    expect(await computersOfDataDir()).toEqual([]);
    const after = await runCli(env, ["status"]);
    expect(after.stdout).not.toContain("without a control plane");

    // Stopped it stays; Start brings it back on a new container; a plain stop stops it again.
    launcher = await start();
    const shown = await rpc("computer/get", { computerId }, token);
    expect(shown.json.result.state).toBe("stopped");
    expect((await rpc("computer/start", { computerId }, token)).status).toBe(200);
    await until("running", computerId, token);
    const stopped = await runCli(env, ["stop"]);
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(stopped.stdout).toBe("Rakazo stopped\n");
    expect(await launcher.exited).toBe(0);
    expect(await computersOfDataDir()).toEqual([]);
    const list = await runCli(env, ["computers", "--json"]);
    expect(JSON.parse(list.stdout)).toEqual(
      expect.arrayContaining([expect.objectContaining({ id: computerId, state: "stopped" })]),
    );
  }, 600_000);
});
