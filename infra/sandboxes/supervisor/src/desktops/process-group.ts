/**
 * Spawning and stopping a desktop's processes. Each is spawned detached, as the leader of its
 * own process group, so stopping it also stops whatever it forked (Chromium's renderers and
 * zygotes); a stop that leaves a live process behind throws.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Spawns `argv` as a process-group leader, output appended to `<logDir>/<logName>` when logging. */
export function spawnLeader(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  log: { readonly dir?: string | undefined; readonly name: string },
): ChildProcess {
  const [binary, ...args] = argv;
  let fd: number | undefined;
  if (log.dir) {
    mkdirSync(log.dir, { recursive: true });
    fd = openSync(path.join(log.dir, log.name), "a");
  }
  try {
    const child = spawn(binary as string, args, {
      detached: true,
      env,
      stdio: fd === undefined ? "ignore" : ["ignore", fd, fd],
    });
    child.on("error", () => undefined); // a missing binary shows as an exit in waitFor
    return child;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Polls `check` until it holds; throws when `child` exits first or the time is up. */
export async function waitFor(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
  child?: ChildProcess,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child && (child.exitCode !== null || child.signalCode !== null)) {
      throw new Error(`${what}: process exited (${child.exitCode ?? child.signalCode})`);
    }
    if (await check()) return;
    await sleep(25);
  }
  throw new Error(`${what}: not ready after ${timeoutMs} ms`);
}

export function alive(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // Already gone.
  }
}

/**
 * Whether any live (non-zombie) process remains in the child's process group. Zombies are
 * skipped: an orphaned Chromium helper reparented to a PID 1 that does not reap would otherwise
 * make every teardown look failed.
 */
function groupAlive(child: ChildProcess): boolean {
  if (child.pid === undefined) return false;
  const pgid = child.pid;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue;
    }
    // "pid (comm) state ppid pgrp ..."; comm may hold spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(fields[2]) === pgid && fields[0] !== "Z") return true;
  }
  return false;
}

/**
 * SIGTERM to the leader (or its whole group), `graceMs` to exit, then SIGKILL to whatever is
 * left of the group. Throws when something survived that.
 */
export async function stopProcess(
  child: ChildProcess | undefined,
  graceMs: number,
  whole: "leader" | "group",
): Promise<void> {
  if (!child || child.pid === undefined) return;
  if (alive(child)) {
    if (whole === "leader") child.kill("SIGTERM");
    else signalGroup(child, "SIGTERM");
    const deadline = Date.now() + graceMs;
    while (alive(child) && Date.now() < deadline) await sleep(25);
  }
  // Whatever is left of the group (renderers, zygotes) goes now.
  if (groupAlive(child)) {
    signalGroup(child, "SIGKILL");
    const deadline = Date.now() + 2000;
    while (groupAlive(child) && Date.now() < deadline) await sleep(25);
    // A killed leader is a zombie until Node reaps it and reports its exit.
    while (alive(child) && Date.now() < deadline) await sleep(25);
  }
  if (alive(child) || groupAlive(child)) throw new Error(`process ${child.pid} survived SIGKILL`);
}
