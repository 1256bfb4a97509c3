/**
 * Processes of a host computer: commands run as this host's user in the computer's network
 * namespace, in their own process group (a timeout kills the group: TERM, KILL 2 s later), and
 * the sweep that stop/destroy use to end every process carrying the computer's marker.
 */
import { spawn } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import { SandboxError } from "../../errors.ts";
import type { ExecResult, OutputChunk } from "../../provider.ts";
import { environHasMarker } from "./host-layout.ts";

/** Grace between TERM and KILL of a timed-out command's process group. */
const KILL_AFTER_MS = 2_000;

export interface SpawnRequest {
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly stdin?: string | Uint8Array;
  readonly timeoutMs?: number;
  readonly onOutput?: (chunk: OutputChunk) => void;
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is gone.
  }
}

export function runCommand(request: SpawnRequest): Promise<ExecResult> {
  const [command, ...args] = request.argv;
  if (!command) throw new SandboxError("SANDBOX_PROVIDER_ERROR", "exec needs a non-empty argv");
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: "/",
      env: request.env,
      // Its own process group: a timeout ends background children too.
      detached: true,
      stdio: [request.stdin === undefined ? "ignore" : "pipe", "pipe", "pipe"],
    });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    const decoders = { stdout: new TextDecoder(), stderr: new TextDecoder() };
    const collect = (stream: "stdout" | "stderr", sink: Buffer[]) => (chunk: Buffer) => {
      sink.push(chunk);
      const data = decoders[stream].decode(chunk, { stream: true });
      if (data && request.onOutput) request.onOutput({ stream, data });
    };
    child.stdout?.on("data", collect("stdout", stdout));
    child.stderr?.on("data", collect("stderr", stderr));
    if (child.stdin) {
      child.stdin.on("error", () => {}); // a command that does not read its stdin
      child.stdin.end(typeof request.stdin === "string" ? Buffer.from(request.stdin) : request.stdin);
    }
    let timedOut = false;
    let killer: NodeJS.Timeout | undefined;
    const timer =
      request.timeoutMs === undefined
        ? undefined
        : setTimeout(
            () => {
              timedOut = true;
              if (child.pid) killGroup(child.pid, "SIGTERM");
              killer = setTimeout(() => child.pid && killGroup(child.pid, "SIGKILL"), KILL_AFTER_MS);
            },
            Math.max(request.timeoutMs, 1),
          );
    child.on("error", (error) => {
      if (timer) clearTimeout(timer);
      reject(new SandboxError("SANDBOX_PROVIDER_ERROR", `exec: ${error.message}`, { cause: error }));
    });
    child.on("close", (code, signal) => {
      if (timer) clearTimeout(timer);
      if (killer) clearTimeout(killer);
      for (const stream of ["stdout", "stderr"] as const) {
        const rest = decoders[stream].decode();
        if (rest && request.onOutput) request.onOutput({ stream, data: rest });
      }
      resolve({
        exitCode: timedOut ? 124 : (code ?? 128 + signalNumber(signal)),
        stdout: Buffer.concat(stdout).toString("utf8"),
        stderr: Buffer.concat(stderr).toString("utf8"),
        timedOut,
      });
    });
  });
}

function signalNumber(signal: NodeJS.Signals | null): number {
  const numbers: Partial<Record<NodeJS.Signals, number>> = { SIGKILL: 9, SIGTERM: 15, SIGINT: 2, SIGHUP: 1 };
  return (signal && numbers[signal]) ?? 1;
}

/** Pids of this host's processes (readable by us) that carry the computer's marker. */
export async function markedProcesses(slug: string): Promise<number[]> {
  const found: number[] = [];
  for (const name of await readdir("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    if (pid === process.pid) continue;
    const environ = await readFile(`/proc/${pid}/environ`).catch(() => null);
    if (environ && environHasMarker(environ, slug)) found.push(pid);
  }
  return found;
}

/** SIGKILLs every marked process until none is left (a dying shell may fork once more). */
export async function killMarked(slug: string): Promise<number> {
  let killed = 0;
  for (let round = 0; round < 20; round += 1) {
    const pids = await markedProcesses(slug);
    if (pids.length === 0) return killed;
    for (const pid of pids) {
      try {
        process.kill(pid, "SIGKILL");
        killed += 1;
      } catch {
        // Gone meanwhile.
      }
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return killed;
}

/** Whether `pid` is alive and one of this computer's processes. */
export async function isMarked(pid: number, slug: string): Promise<boolean> {
  const environ = await readFile(`/proc/${pid}/environ`).catch(() => null);
  return environ !== null && environHasMarker(environ, slug);
}
