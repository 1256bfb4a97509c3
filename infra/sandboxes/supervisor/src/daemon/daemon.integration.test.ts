/**
 * The real daemon on this host: Xvfb, Chromium, x11vnc and xdotool as the image runs them, on a
 * temporary socket, run dir and workspace. Skipped (with the missing tools named) on hosts
 * without them, failing instead under CI=true; `apt-get install -y xvfb x11vnc xdotool chromium` provides them.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { commandTransport, createSupervisedDesktop, unixSocketTransport } from "@rakazo/sandbox";
import { missingOrFail } from "@rakazo/sandbox/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";

const TOOLS = ["Xvfb", "x11vnc", "xdotool", "chromium"];
const missing = missingOrFail("supervisor daemon on the host", TOOLS);
const here = path.dirname(fileURLToPath(import.meta.url));

/** Reads the RFB greeting from a VNC Unix socket; resolves "closed" when the server hangs up. */
function connectRfb(socketPath: string): Promise<{ greeting: string; closed: Promise<void> }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(socketPath);
    socket.once("error", reject);
    const closed = new Promise<void>((done) => socket.once("close", () => done()));
    socket.once("data", (data: Buffer) => resolve({ greeting: data.toString("latin1"), closed }));
  });
}

describe.skipIf(missing.length > 0)(
  missing.length > 0
    ? `supervisor daemon on the host — skipped, missing: ${missing.join(", ")}`
    : "supervisor daemon on the host",
  () => {
    const root = mkdtempSync(path.join(os.tmpdir(), "rakazo-supervisor-it-"));
    const runDir = path.join(root, "run");
    const workspace = path.join(root, "home");
    // Host suites that start desktops run in parallel and share /tmp/.X11-unix, so each takes a
    // display range of its own: gateway-flood 300–449, screens 500–649, screens.lease 650–749,
    // this one 750–949 (two displays each).
    const displayBase = 750 + Math.floor(Math.random() * 190);
    const flags = [
      `--run-dir=${runDir}`,
      `--workspace=${workspace}`,
      `--display-base=${displayBase}`,
      `--debug-port-base=${20000 + displayBase}`,
      `--log-dir=${path.join(root, "logs")}`,
    ];
    const exec = (argv: string[]) =>
      new Promise<{ exitCode: number; stdout: string; stderr: string }>((resolve) => {
        execFile(
          argv[0] as string,
          [...argv.slice(1), ...flags],
          { maxBuffer: 64 << 20 },
          (error, stdout, stderr) =>
            resolve({ exitCode: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
        );
      });
    const commandPath = createSupervisedDesktop(
      commandTransport(exec, { command: [process.execPath, path.join(here, "cli.ts")] }),
    );
    const socketPath = path.join(runDir, "supervisor.sock");
    const docker = createSupervisedDesktop(unixSocketTransport(socketPath));

    beforeAll(async () => {
      // The command path starts the daemon when it is not running.
      const health = await exec([process.execPath, path.join(here, "cli.ts"), "health", "{}"]);
      expect(health.exitCode, health.stdout + health.stderr).toBe(0);
    }, 30_000);

    // A failure inside the daemon (e.g. a teardown that left a process) is only in its own log.
    afterEach((context) => {
      if (context.task.result?.state !== "fail") return;
      const log = path.join(runDir, "supervisor.log");
      if (existsSync(log)) console.error(`supervisor.log:\n${readFileSync(log, "utf8").slice(-4000)}`);
    });

    afterAll(async () => {
      const pidFile = path.join(runDir, "supervisor.pid");
      if (existsSync(pidFile)) {
        const pid = Number(readFileSync(pidFile, "utf8"));
        process.kill(pid, "SIGTERM");
        for (let i = 0; i < 200 && existsSync(pidFile); i += 1) await new Promise((r) => setTimeout(r, 50));
      }
      if (!process.env.KEEP_SUPERVISOR_TEST_DIR) rmSync(root, { recursive: true, force: true });
      else console.error(`kept ${root}`);
    }, 30_000);

    it("gives two bots their own desktops, types into a page, and tears down on release", async () => {
      const [a, b] = await Promise.all([docker.observe("alice"), commandPath.observe("bob")]);
      expect(a.slot.index).not.toBe(b.slot.index);
      expect([a.width, a.height]).toEqual([1280, 800]);
      expect(Buffer.from(a.png.subarray(1, 4)).toString()).toBe("PNG");

      const listed = await docker.list();
      expect(listed.map((slot) => slot.botId).sort()).toEqual(["alice", "bob"]);
      const alice = listed.find((slot) => slot.botId === "alice");
      if (!alice) throw new Error("alice not listed");
      expect(alice.vncSocket).toBe(
        path.join(runDir, "vnc", `slot${a.slot.index}-g${a.slot.generation}.sock`),
      );
      // A desktop starts without its screen server; a tool dialling the socket asks for it.
      expect(existsSync(alice.vncSocket)).toBe(false);
      expect(await commandPath.openScreen("alice")).toEqual({ vncSocket: alice.vncSocket });
      const viewer = await connectRfb(alice.vncSocket);
      expect(viewer.greeting).toMatch(/^RFB 003\.00\d/);

      const page = "data:text/html;charset=utf-8,<textarea autofocus style='font-size:40px'></textarea>";
      const opened = await docker.act("alice", [
        { type: "key", keys: "ctrl+l" },
        { type: "type", text: page },
        { type: "key", keys: "Return" },
        { type: "wait", ms: 800 },
      ]);
      expect(opened).toEqual({ completed: 4, total: 4 });
      // The page settles at its own pace on a loaded host (a fixed 800 ms was not enough with
      // CI's parallel suites): observe until two frames in a row hash equal.
      let before = await docker.observe("alice");
      for (const settleBy = Date.now() + 20_000; ; ) {
        const same = await docker.observe("alice");
        if (same.frameHash === before.frameHash) break;
        if (Date.now() > settleBy)
          throw new Error("alice's frame never settled: equal frames must hash equal");
        before = same;
      }
      const typed = await commandPath.act("alice", [
        { type: "type", text: "héllo 日本" },
        { type: "wait", ms: 200 },
      ]);
      expect(typed).toEqual({ completed: 2, total: 2 });
      const after = await docker.observe("alice");
      expect(after.frameHash).not.toBe(before.frameHash);
      // Bob's screen is untouched by Alice's typing.
      expect((await docker.observe("bob")).slot).toEqual(b.slot);

      await docker.release("alice");
      await viewer.closed; // the connected viewer was disconnected (SCR-3)
      expect(existsSync(alice.vncSocket)).toBe(false);
      expect((await docker.list()).map((slot) => slot.botId)).toEqual(["bob"]);
      // The profile stays (CMP-2).
      expect(existsSync(path.join(workspace, ".browser-profiles", "bot-alice", "Default"))).toBe(true);

      // Slot reuse: a new bot gets the same index with a new generation and a new socket path.
      const carol = await docker.observe("carol");
      expect(carol.slot).toEqual({ index: a.slot.index, generation: a.slot.generation + 1 });
      await expect(connectRfb(alice.vncSocket)).rejects.toMatchObject({ code: "ENOENT" });
    }, 90_000);

    it("refuses malformed actions with their index, through both transports", async () => {
      for (const desktop of [docker, commandPath]) {
        const result = await desktop.act("bob", [
          { type: "wait", ms: 1 },
          { type: "key", keys: "$(reboot)" },
        ]);
        expect(result).toMatchObject({ completed: 1, total: 2, error: { code: "INVALID_ACTION", index: 1 } });
      }
    }, 30_000);
  },
);
