/**
 * The daemon's single-instance lock, `<runDir>/supervisor.pid`: one supervisor per computer. A
 * second instance exits without touching the first, unless it is the container's main process,
 * which stands by (`standBy`).
 */
import { linkSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import type { Log } from "../log.ts";

/**
 * A live supervisor daemon (bundle or source), not a process that reused its pid. `/proc/<n>`
 * also answers for thread ids, with the whole process's cmdline: a stale lock from the previous
 * container (the run dir outlives it, and pids in a fresh container repeat) named one of this
 * daemon's own threads, so it took itself for the holder. Only a thread-group leader counts.
 */
export function isSupervisor(pid: number): boolean {
  try {
    const tgid = /^Tgid:\s+(\d+)$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    if (Number(tgid) !== pid) return false;
    const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    return (
      argv.includes("serve") && argv.some((arg) => /(^|\/)(supervisor\.mjs|main\.ts|entry\.ts)$/.test(arg))
    );
  } catch {
    return false;
  }
}

/**
 * Takes the single-instance lock; false when a live supervisor holds it. The pid is written
 * first and linked into place, so a contender never reads a lock file without its pid.
 */
export function takeLock(file: string): boolean {
  const mine = `${file}.${process.pid}`;
  writeFileSync(mine, String(process.pid));
  try {
    for (let attempt = 0; attempt < 2; attempt += 1) {
      try {
        linkSync(mine, file);
        return true;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
        if (lockHolder(file) !== undefined) return false;
        rmSync(file, { force: true });
      }
    }
    return false;
  } finally {
    rmSync(mine, { force: true });
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The live supervisor named in the lock file, if any. */
function lockHolder(file: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(file, "utf8"), 10);
    return Number.isInteger(pid) && pid !== process.pid && isSupervisor(pid) ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The container's main process (its parent is PID 1, the image's init) lost the lock to an
 * instance the command path started first, e.g. a host call that came before this one had
 * loaded. Exiting would end the container and every process in it, so it stands by instead:
 * it takes over if the holder dies, and a SIGTERM (`docker stop`) goes on to the holder, whose
 * clean shutdown (browsers closed, CMP-6) this waits for before exiting.
 */
export async function standBy(lock: string, log: Log): Promise<void> {
  let stopping = false;
  const stop = async (): Promise<void> => {
    if (stopping) return;
    stopping = true;
    const holder = lockHolder(lock);
    if (holder !== undefined) {
      process.kill(holder, "SIGTERM");
      for (const deadline = Date.now() + 20_000; lockHolder(lock) === holder && Date.now() < deadline; ) {
        await sleep(50);
      }
    }
    process.exit(0);
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  log({
    event: "daemon.lock.standing_by",
    message: `another instance holds ${lock}; standing by as the container's main process`,
  });
  while (stopping || !takeLock(lock)) await sleep(500);
  process.off("SIGTERM", stop);
  process.off("SIGINT", stop);
  log({ event: "daemon.lock.taken_over", message: "the holder is gone; taking over" });
}
