// The launcher as a supervisor: the real launcher (embedded Postgres, real API,
// worker and web processes) on a temporary DATA_DIR. Ready only once all three serve; kill -9 of
// the worker leaves API and web serving and the worker comes back; the operator commands work
// against the same data; SIGINT stops children before Postgres without a single error line.
import { rm } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readState } from "./state.ts";
import {
  healthy,
  launcherEnv,
  postgresRunning,
  type RunningLauncher,
  runCli,
  spawnLauncher,
  stopLaunchers,
  tempDataDir,
} from "./testing/launcher-process.ts";

let dataDir: string;
let launcher: RunningLauncher;
let api: string;
let web: string;

const rpc = async (method: string, body: unknown, token?: string) => {
  const res = await fetch(`${api}/rpc/${method}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as any };
};

beforeAll(async () => {
  dataDir = await tempDataDir();
  const env = await launcherEnv(dataDir);
  api = `http://127.0.0.1:${env.API_PORT}`;
  web = `http://127.0.0.1:${env.WEB_PORT}`;
  launcher = spawnLauncher(env);
  await launcher.waitFor(() => launcher.records().some((r) => r.msg === "launcher.ready"), 90_000, "ready");
}, 120_000);

afterAll(async () => {
  await stopLaunchers();
  await rm(dataDir, { recursive: true, force: true });
}, 60_000);

describe("launcher", () => {
  it("prints ready only after API, worker and web are up, with the URLs and a next step", async () => {
    const msgs = launcher.records().map((r) => r.msg);
    const ready = msgs.indexOf("launcher.ready");
    for (const up of ["api.listening", "worker.started", "web.listening"]) {
      expect(msgs.indexOf(up), up).toBeGreaterThanOrEqual(0);
      expect(msgs.indexOf(up), up).toBeLessThan(ready);
    }
    expect(launcher.records()[ready]).toMatchObject({ api, web, provider: "fake" });
    expect(await healthy(api)).toBe(true);
    expect(await healthy(web)).toBe(true);
  });

  it("a second start on the same DATA_DIR is refused, naming the running one", async () => {
    const second = spawnLauncher(await launcherEnv(dataDir));
    expect(await second.exited).toBe(1);
    expect(second.stderr()).toContain(`Rakazo is already running from ${dataDir}`);
    expect(second.stdout()).not.toContain("postgres.started");
    expect(readState(dataDir)?.pid).toBe(launcher.process.pid);
  }, 60_000);

  it("kill -9 of the worker leaves API and web serving; the worker is back within seconds", async () => {
    const before = readState(dataDir)?.children.worker;
    expect(before).toBeGreaterThan(0);
    process.kill(before as number, "SIGKILL");
    const killedAt = Date.now();
    let servedThroughout = true;
    await launcher.waitFor(
      async () => {
        if (!(await healthy(api)) || !(await healthy(web))) servedThroughout = false;
        return launcher.records().some((r) => r.msg === "launcher.child_back" && r.child === "worker");
      },
      60_000,
      "worker back",
    );
    const backInMs = Date.now() - killedAt;
    expect(servedThroughout).toBe(true);
    expect(launcher.process.exitCode).toBeNull();
    expect(launcher.records().find((r) => r.msg === "launcher.child_restarting")).toMatchObject({
      child: "worker",
      signal: "SIGKILL",
    });
    const after = readState(dataDir)?.children.worker;
    expect(after).toBeGreaterThan(0);
    expect(after).not.toBe(before);
    // Generous for a loaded 2-core machine; the restart delay itself is 0.5 s.
    expect(backInMs).toBeLessThan(45_000);
  }, 90_000);

  it("token create mints a working token for an existing user; status and computers show the system", async () => {
    const setup = await rpc("setup/bootstrap", { userName: "ops", spaceName: "S", botName: "B" });
    expect(setup.status).toBe(200);
    const created = await runCli(launcher.env, ["token", "create", "--user", "ops"]);
    expect(created.code, created.stderr).toBe(0);
    const token = created.stdout.trim();
    expect(token).toMatch(/^rkz_[A-Za-z0-9]{43}$/);
    expect(token).not.toBe(setup.json.result.token);
    const computer = await rpc("computer/create", { spaceId: setup.json.result.spaceId }, token);
    expect(computer.status).toBe(200);

    const unknown = await runCli(launcher.env, ["token", "create", "--user", "nobody"]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('NOT_FOUND: no user named "nobody"');

    const list = await runCli(launcher.env, ["computers", "--json"]);
    expect(list.code, list.stderr).toBe(0);
    // The space's Team Computer (CMP-1, created unprovisioned with the space) and the new one.
    expect(JSON.parse(list.stdout)).toEqual([
      expect.objectContaining({ id: setup.json.result.computerId, state: "unprovisioned" }),
      expect.objectContaining({ id: computer.json.result.id, providerKind: "fake" }),
    ]);
    const status = await runCli(launcher.env, ["status"]);
    expect(status.code, status.stdout).toBe(0);
    expect(status.stdout).toContain("Rakazo is ready");
    expect(status.stdout).toMatch(/api\s+pid \d+ running, http:\/\/127\.0\.0\.1:\d+ listening/);
    expect(status.stdout).toMatch(/postgres\s+pid \d+ running/);
    expect(status.stdout).toMatch(/computers .*1 (provisioning|running) on fake/);
    expect(status.stdout).toMatch(/computers .*1 unprovisioned on fake/);
  }, 90_000);

  it("Ctrl-C stops the children, then Postgres, with no error line and no postgres left", async () => {
    const from = launcher.stdout().length;
    launcher.ctrlC();
    expect(await launcher.exited).toBe(0);
    const tail = launcher.stdout().slice(from);
    expect(tail).not.toMatch(/"level":"error"/);
    expect(tail).not.toContain("57P01");
    expect(launcher.stderr()).toBe("");
    const msgs = launcher.records().map((r) => r.msg);
    expect(msgs.indexOf("postgres.stopped")).toBeGreaterThan(msgs.indexOf("api.stopping"));
    expect(await postgresRunning(dataDir)).toBe(false);
    expect(readState(dataDir)).toBeUndefined();
    const status = await runCli(launcher.env, ["status"]);
    expect(status.code).toBe(3);
    expect(status.stdout).toContain("Rakazo is not running");
  }, 60_000);
});
