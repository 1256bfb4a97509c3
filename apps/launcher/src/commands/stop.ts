/**
 * `./rakazo stop`: asks the running launcher to stop (SIGTERM: children first, then Postgres)
 * and waits for it. Processes left by a launcher that was killed (-9) are stopped directly, in
 * the same order.
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

export async function stopCommand(env: RuntimeEnv): Promise<number> {
  const state = readState(env.DATA_DIR);
  if (!state) {
    process.stdout.write("Rakazo is not running\n");
    return 0;
  }
  if (alive(state.pid)) {
    signal(state.pid, "SIGTERM");
    if (!(await gone([state.pid], 60_000))) {
      process.stderr.write(`rakazo: the launcher (pid ${state.pid}) did not stop within 60 s\n`);
      return 1;
    }
    process.stdout.write("Rakazo stopped\n");
    return 0;
  }
  const children = Object.values(state.children).filter((pid): pid is number => alive(pid));
  for (const pid of children) signal(pid, "SIGTERM");
  await gone(children, 30_000);
  // Fast shutdown, as the launcher does it.
  signal(state.postgres?.pid, "SIGINT");
  await gone(state.postgres ? [state.postgres.pid] : [], 30_000);
  removeState(env.DATA_DIR);
  process.stdout.write(`Rakazo was not running; stopped what it left (${children.length} services)\n`);
  return 0;
}
