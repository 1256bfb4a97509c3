// The first-run traps, each against the real launcher on a temporary DATA_DIR: a busy
// port names the port and its setting (no EADDRINUSE stack, nothing started); an explicit
// Docker provider without its image says so at start, naming the build command; `.env.example`
// taken as is starts; a changed EMBEDDED_POSTGRES_PORT is reported and used, not kept silently.
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { createServer as createHttpServer } from "node:http";
import { type AddressInfo, createServer, type Server } from "node:net";
import { join } from "node:path";
import { parseEnv } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { readState } from "./state.ts";
import {
  freePort,
  healthy,
  launcherEnv,
  postgresRunning,
  runCli,
  spawnLauncher,
  stopLaunchers,
  tempDataDir,
} from "./testing/launcher-process.ts";

const dirs: string[] = [];
afterAll(async () => {
  await stopLaunchers();
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
}, 60_000);

async function dataDir(): Promise<string> {
  const dir = await tempDataDir();
  dirs.push(dir);
  return dir;
}

describe("first run", () => {
  it("a busy port is named with the setting that moves it; nothing is started", async () => {
    const dir = await dataDir();
    const env = await launcherEnv(dir);
    const squatter: Server = createServer();
    await new Promise<void>((done) => squatter.listen(Number(env.WEB_PORT), "127.0.0.1", done));
    try {
      const launcher = spawnLauncher(env);
      expect(await launcher.exited).toBe(1);
      expect(launcher.stderr()).toContain(
        `rakazo: cannot start: port ${env.WEB_PORT} on 127.0.0.1 is already in use. Stop what listens there, or set WEB_PORT`,
      );
      expect(launcher.stderr() + launcher.stdout()).not.toMatch(/EADDRINUSE|\n\s+at /);
      expect(launcher.stdout()).not.toContain("postgres.started");
      expect(await postgresRunning(dir)).toBe(false);
    } finally {
      squatter.close();
    }
  }, 60_000);

  it("RAKAZO_PROVIDER=docker without the computer image fails at start, naming the build command", async () => {
    const dir = await dataDir();
    const launcher = spawnLauncher(
      await launcherEnv(dir, {
        RAKAZO_PROVIDER: "docker",
        RAKAZO_COMPUTER_IMAGE: `rakazo-computer:absent-${Date.now()}`,
      }),
    );
    expect(await launcher.exited).toBe(1);
    expect(launcher.stderr()).toMatch(/rakazo: cannot start: RAKAZO_PROVIDER=docker, but .*/);
    expect(launcher.stderr()).toContain("bash infra/sandboxes/image/build.sh");
    expect(launcher.stdout()).not.toContain("postgres.started");
  }, 60_000);

  it("RAKAZO_PROVIDER=boat without BOAT_API_KEY is refused before anything starts, naming the key", async () => {
    const dir = await dataDir();
    const launcher = spawnLauncher(await launcherEnv(dir, { RAKAZO_PROVIDER: "boat", E2B_API_KEY: "other" }));
    expect(await launcher.exited).toBe(1);
    expect(launcher.stderr()).toContain(
      "rakazo: invalid environment: BOAT_API_KEY: RAKAZO_PROVIDER=boat needs BOAT_API_KEY",
    );
    expect(launcher.stdout()).not.toContain("postgres.started");
    expect(await postgresRunning(dir)).toBe(false);
  }, 60_000);

  it("RAKAZO_PROVIDER=boat: the bundle is staged in DATA_DIR, the key reaches API and worker but not web nor a log line", async () => {
    const dir = await dataDir();
    // A loopback stand-in for Boat (nothing leaves the machine): every call is 404.
    const boat = createHttpServer((_req, res) => {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { code: "not_found", message: "not found" } }));
    });
    await new Promise<void>((done) => boat.listen(0, "127.0.0.1", done));
    const key = `boat_${randomBytes(16).toString("hex")}`;
    try {
      const env = await launcherEnv(dir, {
        RAKAZO_PROVIDER: "boat",
        BOAT_API_KEY: key,
        BOAT_API_URL: `http://127.0.0.1:${(boat.address() as AddressInfo).port}/api/v1`,
      });
      const launcher = spawnLauncher(env);
      await launcher.waitFor(
        () => launcher.records().some((r) => r.msg === "launcher.ready"),
        120_000,
        "ready",
      );
      expect(readFileSync(join(dir, "remote", "supervisor.mjs"), "utf8").length).toBeGreaterThan(1_000);
      const children = readState(dir)?.children ?? {};
      const environ = (pid: number | undefined) => readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
      expect(environ(children.api)).toContain(`BOAT_API_KEY=${key}`);
      expect(environ(children.worker)).toContain(`BOAT_API_KEY=${key}`);
      expect(environ(children.web).join("\n")).not.toContain(key);
      expect(await (await fetch(`http://127.0.0.1:${env.API_PORT}/health`)).json()).toMatchObject({
        provider: "boat",
      });
      expect(launcher.stdout() + launcher.stderr()).not.toContain(key);
      launcher.ctrlC();
      expect(await launcher.exited).toBe(0);
    } finally {
      boat.close();
    }
  }, 180_000);

  it(".env.example as is starts; a changed EMBEDDED_POSTGRES_PORT is reported and used; ./rakazo stop stops it", async () => {
    const dir = await dataDir();
    const example = parseEnv(readFileSync(new URL("../../../.env.example", import.meta.url), "utf8"));
    const ports = await launcherEnv(dir);
    // The example as is, on this test's data dir and free ports; fake computers for speed.
    const env = { ...example, ...ports } as Record<string, string>;
    const first = spawnLauncher(env);
    await first.waitFor(() => first.records().some((r) => r.msg === "launcher.ready"), 90_000, "ready");
    first.process.kill("SIGTERM");
    expect(await first.exited).toBe(0);

    const moved = String(await freePort());
    const second = spawnLauncher({ ...env, EMBEDDED_POSTGRES_PORT: moved });
    await second.waitFor(() => second.records().some((r) => r.msg === "launcher.ready"), 90_000, "ready");
    expect(second.records().find((r) => r.msg === "postgres.port_changed")).toMatchObject({
      level: "warn",
      from: Number(env.EMBEDDED_POSTGRES_PORT),
      to: Number(moved),
      setting: "EMBEDDED_POSTGRES_PORT",
    });
    expect(second.records().find((r) => r.msg === "postgres.started")).toMatchObject({ port: Number(moved) });

    const stop = await runCli(env, ["stop"]);
    expect(stop).toMatchObject({ code: 0, stdout: "Rakazo stopped\n" });
    expect(await second.exited).toBe(0);
    expect(await postgresRunning(dir)).toBe(false);
  }, 240_000);

  it("a worker that keeps crashing stops the whole system with a message naming it", async () => {
    const dir = await dataDir();
    const env = await launcherEnv(dir);
    const launcher = spawnLauncher(env);
    await launcher.waitFor(() => launcher.records().some((r) => r.msg === "launcher.ready"), 90_000, "ready");
    const killed = new Set<number>();
    await launcher.waitFor(
      () => {
        const pid = readState(dir)?.children.worker;
        if (pid && !killed.has(pid)) {
          killed.add(pid);
          try {
            process.kill(pid, "SIGKILL");
          } catch {} // already gone
        }
        return launcher.process.exitCode !== null;
      },
      120_000,
      "giving up",
    );
    expect(await launcher.exited).toBe(1);
    expect(killed.size).toBe(5);
    expect(launcher.stderr()).toContain("rakazo: the worker crashed 5 times in 60 s; stopping Rakazo.");
    expect(launcher.records().find((r) => r.msg === "launcher.child_gave_up")).toMatchObject({
      child: "worker",
      crashes: 5,
    });
    expect(await healthy(`http://127.0.0.1:${env.API_PORT}`)).toBe(false);
    expect(await postgresRunning(dir)).toBe(false);
  }, 240_000);
});
