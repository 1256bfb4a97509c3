/**
 * The REAL `@daytonaio/sdk` (0.218.0) against the Daytona emulator, through its `apiUrl` and
 * the toolbox and preview URLs the emulator returns; every sandbox a real container of the
 * computer image with `--network none` (PRV-1).
 */

import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Daytona, DaytonaNotFoundError } from "@daytonaio/sdk";
import { COMPUTER_IMAGE, requireDocker } from "@rakazo/sandbox/testing";
import Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMachinePool } from "../machines.ts";
import { type DaytonaEmulator, startDaytonaEmulator } from "./emulator.ts";

const gate = await requireDocker("Daytona emulator with the real SDK");
const OWNER = "i15-daytona-emulator-test";
const PACKAGE_DIR = fileURLToPath(new URL("../..", import.meta.url));

/**
 * The SDK in its DEFAULT configuration (socket.io events on, settings from the environment as
 * the CLI prints them), in its own Node process: it reports what it saw, and must then exit.
 */
const DEFAULT_SDK_SCRIPT = `
import { Daytona } from "@daytonaio/sdk";
const daytona = new Daytona();
const heard = [];
const sandbox = await daytona.create({ autoStopInterval: 0 });
daytona.eventDispatcher?.socket?.onAny((event, data) => heard.push(event + ":" + (data?.newState ?? "")));
const run = await sandbox.process.executeCommand("echo default");
await sandbox.stop();
const stopped = sandbox.state;
await sandbox.start();
const started = sandbox.state;
await sandbox.delete();
console.log(JSON.stringify({
  state: started, stopped, result: run.result,
  events: daytona.eventDispatcher?.isConnected === true, heard,
}));
`;

function runChild(env: Record<string, string>, timeoutMs: number) {
  return new Promise<{ code: number | null; stdout: string; stderr: string; ms: number }>((resolve) => {
    const started = Date.now();
    const child = spawn(process.execPath, ["--input-type=module", "-e", DEFAULT_SDK_SCRIPT], {
      cwd: PACKAGE_DIR,
      env: { PATH: process.env.PATH ?? "", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: Date.now() - started });
    });
  });
}

describe.skipIf(gate.skip)(gate.title, () => {
  const machines = createMachinePool({
    image: COMPUTER_IMAGE,
    emulator: "daytona",
    owner: OWNER,
  });
  let clock = Date.parse("2026-12-01T12:00:00Z");
  let emulator: DaytonaEmulator;
  let daytona: Daytona;

  beforeAll(async () => {
    emulator = await startDaytonaEmulator({ machines, apiKey: "dtn_test_key", now: () => clock });
    daytona = new Daytona({
      apiKey: "dtn_test_key",
      apiUrl: emulator.apiUrl,
      target: "local",
      useDeprecatedPolling: true,
    });
  });
  afterAll(async () => {
    await emulator?.close();
    await machines.removeAll();
  });

  it("create, labels, sessions with exit codes and split streams, files, stop/start, delete", async () => {
    const sandbox = await daytona.create(
      { labels: { "rakazo.computer": "cmp_sdk" }, autoStopInterval: 0 },
      { timeout: 60 },
    );
    expect(sandbox.state).toBe("started");
    const found = [];
    for await (const s of await daytona.list({ labels: { "rakazo.computer": "cmp_sdk" } })) found.push(s.id);
    expect(found).toEqual([sandbox.id]);

    // A command exiting non-zero is a result, not an exception.
    const combined = await sandbox.process.executeCommand("echo hi; exit 4");
    expect(combined).toMatchObject({ exitCode: 4, result: "hi\n" });

    await sandbox.process.createSession("s1");
    const sync = await sandbox.process.executeSessionCommand("s1", {
      command: "echo out; echo err >&2; exit 3",
    });
    expect(sync).toMatchObject({ exitCode: 3, stdout: "out\n", stderr: "err\n" });
    const started = await sandbox.process.executeSessionCommand("s1", {
      command: "echo a; sleep 0.3; echo b >&2",
      runAsync: true,
    });
    const out: string[] = [];
    const err: string[] = [];
    await sandbox.process.getSessionCommandLogs(
      "s1",
      started.cmdId ?? "",
      (c) => out.push(c),
      (c) => err.push(c),
    );
    expect(out.join("")).toBe("a\n");
    expect(err.join("")).toBe("b\n");
    expect((await sandbox.process.getSessionCommand("s1", started.cmdId ?? "")).exitCode).toBe(0);

    await sandbox.fs.uploadFile(Buffer.from([9, 8, 7, 0]), "/home/user/x/y.bin");
    expect([...(await sandbox.fs.downloadFile("/home/user/x/y.bin"))]).toEqual([9, 8, 7, 0]);
    await expect(sandbox.fs.downloadFile("/home/user/nope")).rejects.toThrow(/not found/i);

    await sandbox.stop();
    expect(sandbox.state).toBe("stopped");
    await sandbox.start();
    expect(sandbox.state).toBe("started");
    expect((await sandbox.fs.downloadFile("/home/user/x/y.bin")).length).toBe(4);

    await sandbox.delete();
    expect((await daytona.get(sandbox.id)).state).toBe("destroyed");
    await emulator.vanish(sandbox.id);
    await expect(daytona.get(sandbox.id)).rejects.toBeInstanceOf(DaytonaNotFoundError);
  });

  it("preview links admit only the x-daytona-preview-token header, and a restart resets the token", async () => {
    const sandbox = await daytona.create({ autoStopInterval: 0 }, { timeout: 60 });
    await sandbox.process.executeCommand(
      "mkdir -p /tmp/www && echo preview > /tmp/www/index.html && (cd /tmp/www && nohup python3 -m http.server 8123 >/dev/null 2>&1 &); sleep 1",
    );
    const link = await sandbox.getPreviewLink(8123);
    expect(link.url).not.toContain(link.token);
    expect((await fetch(link.url)).status).toBe(401);
    expect(await (await fetch(link.url, { headers: { "x-daytona-preview-token": link.token } })).text()).toBe(
      "preview\n",
    );
    await sandbox.stop();
    await sandbox.start();
    await sandbox.process.executeCommand(
      "(cd /tmp/www && nohup python3 -m http.server 8123 >/dev/null 2>&1 &); sleep 1",
    );
    expect(
      (
        await fetch((await sandbox.getPreviewLink(8123)).url, {
          headers: { "x-daytona-preview-token": link.token },
        })
      ).status,
    ).toBe(401);
    const fresh = await sandbox.getPreviewLink(8123);
    expect(fresh.token).not.toBe(link.token);
    expect((await fetch(fresh.url, { headers: { "x-daytona-preview-token": fresh.token } })).status).toBe(
      200,
    );
    await sandbox.delete();
  });

  it("the SDK's default configuration: events over socket.io, and its process exits when done", async () => {
    const child = await runChild(
      { DAYTONA_API_URL: emulator.apiUrl, DAYTONA_API_KEY: "dtn_test_key" },
      30_000,
    );
    expect(child.code, child.stderr).toBe(0);
    expect(JSON.parse(child.stdout)).toEqual({
      state: "started",
      stopped: "stopped",
      result: "default\n",
      events: true,
      heard: expect.arrayContaining(["sandbox.state.updated:stopped", "sandbox.state.updated:started"]),
    });
    // Exited on its own (the kill at 30 s gives code null): no handle left open.
    expect(child.ms).toBeLessThan(30_000);
    // A wrong key is refused, and the process still exits (no event-stream retries keep it).
    const refused = await runChild({ DAYTONA_API_URL: emulator.apiUrl, DAYTONA_API_KEY: "wrong" }, 30_000);
    expect(refused.code).not.toBe(0);
    expect(refused.code).not.toBeNull();
    expect(refused.stderr).toMatch(/Unauthorized/);
  });

  it("a create the caller gave up on mid-way leaves no container", async () => {
    const docker = new Docker();
    const mine = () =>
      docker.listContainers({ all: true, filters: { label: [`rakazo-emulator.owner=${OWNER}`] } });
    const before = new Set((await mine()).map((c) => c.Id));
    const abort = new AbortController();
    const created = fetch(`${emulator.apiUrl}/sandbox`, {
      method: "POST",
      headers: { authorization: "Bearer dtn_test_key", "content-type": "application/json" },
      body: JSON.stringify({ labels: { "rakazo.test": "abandoned" } }),
      signal: abort.signal,
    }).catch((e: unknown) => e);
    const deadline = Date.now() + 30_000;
    while ((await mine()).every((c) => before.has(c.Id)) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    abort.abort();
    expect(await created).toBeInstanceOf(Error);
    let left = (await mine()).filter((c) => !before.has(c.Id));
    for (let i = 0; i < 100 && left.length > 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      left = (await mine()).filter((c) => !before.has(c.Id));
    }
    expect(left.map((c) => c.Names)).toEqual([]);
    const listed = [];
    for await (const s of await daytona.list({ labels: { "rakazo.test": "abandoned" } })) listed.push(s.id);
    expect(listed).toEqual([]);
  });

  it("auto-stop acts on the emulated clock; activity through the SDK restarts its count", async () => {
    const sandbox = await daytona.create({ autoStopInterval: 15 }, { timeout: 60 });
    clock += 10 * 60_000;
    await sandbox.refreshActivity();
    clock += 10 * 60_000;
    expect(await emulator.sweep()).not.toContain(sandbox.id);
    clock += 6 * 60_000;
    expect(await emulator.sweep()).toContain(sandbox.id);
    await sandbox.refreshData();
    expect(sandbox.state).toBe("stopped");
    await sandbox.delete();
  });
});
