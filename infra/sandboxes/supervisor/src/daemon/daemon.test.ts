/**
 * Who holds the supervisor's lock. The run dir outlives a container, and pids in a fresh
 * container repeat, so a stale lock can name a thread of the new daemon: `/proc/<tid>` answers
 * with the whole process's cmdline, and the daemon took itself for the holder (in CI the
 * container's main supervisor then exited, ending the container). A thread never counts.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { isSupervisor } from "./lock.ts";

describe("the supervisor lock's holder check", () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "rakazo-daemon-lock-"));
  // Looks like a daemon to /proc (`node …/supervisor.mjs serve`) and keeps a thread pool busy.
  const script = path.join(dir, "supervisor.mjs");
  writeFileSync(script, "setInterval(() => {}, 1000);\n");
  const daemon = spawn(process.execPath, [script, "serve"], { stdio: "ignore" });
  afterAll(() => {
    daemon.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  });

  it("counts a live daemon's pid, and never one of its threads", async () => {
    const pid = daemon.pid as number;
    let threads: number[] = [];
    for (let i = 0; i < 100 && threads.length === 0; i += 1) {
      threads = readdirSync(`/proc/${pid}/task`)
        .map(Number)
        .filter((tid) => tid !== pid);
      if (threads.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(threads.length).toBeGreaterThan(0);
    expect(isSupervisor(pid)).toBe(true);
    for (const tid of threads) expect(isSupervisor(tid), `thread ${tid}`).toBe(false);
    expect(isSupervisor(process.pid)).toBe(false); // this process is not a daemon
  });
});
