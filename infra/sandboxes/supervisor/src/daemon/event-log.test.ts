/**
 * The daemon's output is one JSON-lines event log: every line it writes on stderr (which the
 * command path appends to `<runDir>/supervisor.log`) is a JSON object with a time and an event
 * name, from start through a refused second instance to shutdown.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const MAIN = path.join(path.dirname(new URL(import.meta.url).pathname), "main.ts");

/** Runs `main.ts serve` in `dir`: `ready` at its first line (it listens by then), `exited` with all. */
function serve(dir: string): { child: ChildProcess; ready: Promise<void>; exited: Promise<string> } {
  const child = spawn(
    process.execPath,
    [MAIN, "serve", "--run-dir", dir, "--workspace", path.join(dir, "ws"), "--cgroup-root", "off"],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let stderr = "";
  const exited = new Promise<string>((resolve) => child.on("close", () => resolve(stderr)));
  const ready = new Promise<void>((resolve, reject) => {
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
      if (stderr.includes("\n")) resolve();
    });
    void exited.then(() => reject(new Error(`the daemon exited: ${stderr}`)));
  });
  // A refused instance never becomes ready; only the first one's `ready` is awaited.
  ready.catch(() => undefined);
  return { child, ready, exited };
}

/** Every line parsed; a line that is not a JSON object with `time` and `event` fails the test. */
function events(stderr: string): Array<{ time: string; event: string } & Record<string, unknown>> {
  return stderr
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => {
      const parsed: unknown = JSON.parse(line);
      expect(parsed, line).toMatchObject({ time: expect.any(String), event: expect.any(String) });
      return parsed as { time: string; event: string };
    });
}

describe("the daemon's event log", () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "rakazo-event-log-"));
  const children: ChildProcess[] = [];
  afterAll(() => {
    for (const child of children) child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  });

  it("writes only JSON lines: listening, a refused second instance, stopped", async () => {
    const first = serve(dir);
    children.push(first.child);
    await first.ready;
    const second = await serve(dir).exited;
    expect(events(second).map((entry) => entry.event)).toEqual(["daemon.lock.held"]);
    first.child.kill("SIGTERM");
    const all = events(await first.exited);
    expect(all.map((entry) => entry.event)).toEqual(["daemon.listening", "daemon.stopped"]);
    expect(all[0]).toMatchObject({ pid: first.child.pid });
  }, 30_000);
});
