/**
 * `./rakazo stop [--keep-computers]`: asks the running launcher to stop (children first, then
 * Postgres) and waits for it. By default (SIGTERM) the worker checkpoints and stops the running
 * computers before it exits; with `--keep-computers` (SIGUSR2) it leaves them running, and
 * `./rakazo status` lists them. Processes left by a launcher that was killed (-9) are stopped
 * directly, in the same order, with the same choice for the computers.
 */
import type { RuntimeEnv } from "@rakazo/config";
import { alive, readState, removeState } from "../state.ts";

async function gone(pids: number[], ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (pids.some((pid) => alive(pid))) {
    if (Date.now() > deadline) return false;
    await new Promise((done) => setTimeout(done, 100));
  }
  return true;
}

function signal(pid: number | undefined, name: NodeJS.Signals): void {
  if (!pid || !alive(pid)) return;
  try {
    process.kill(pid, name);
  } catch {}
}

export async function stopCommand(env: RuntimeEnv, args: readonly string[] = []): Promise<number> {
  const unknown = args.filter((arg) => arg !== "--keep-computers");
  if (unknown.length > 0) {
    process.stderr.write(`rakazo: stop takes only --keep-computers, not ${unknown.join(" ")}\n`);
    return 2;
  }
  const keep = args.includes("--keep-computers");
  const state = readState(env.DATA_DIR);
  if (!state) {
    process.stdout.write("Rakazo is not running\n");
    return 0;
  }
  const after = keep ? " (computers left running: ./rakazo status lists them)" : "";
  if (alive(state.pid)) {
    signal(state.pid, keep ? "SIGUSR2" : "SIGTERM");
    // The launcher gives the worker 30 s to stop the computers, then stops Postgres.
    if (!(await gone([state.pid], 90_000))) {
      process.stderr.write(`rakazo: the launcher (pid ${state.pid}) did not stop within 90 s\n`);
      return 1;
    }
    process.stdout.write(`Rakazo stopped${after}\n`);
    return 0;
  }
  const children = Object.values(state.children).filter((pid): pid is number => alive(pid));
  for (const [name, pid] of Object.entries(state.children)) {
    if (pid && children.includes(pid)) signal(pid, keep && name === "worker" ? "SIGUSR2" : "SIGTERM");
  }
  await gone(children, 40_000);
  // Fast shutdown, as the launcher does it.
  signal(state.postgres?.pid, "SIGINT");
  await gone(state.postgres ? [state.postgres.pid] : [], 30_000);
  removeState(env.DATA_DIR);
  process.stdout.write(
    `Rakazo was not running; stopped what it left (${children.length} services)${after}\n`,
  );
  return 0;
}
