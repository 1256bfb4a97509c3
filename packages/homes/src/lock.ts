/**
 * Checkpoints, restores and cache refreshes of one home are serialized: an in-process mutex
 * per home, then a lock that also holds across processes. The default cross-process lock is
 * a lock file (`DATA_DIR/home-revisions/<home key>.lock`, O_EXCL, holding the owner's pid; a
 * lock whose owner is dead is taken over). Multi-host deployments pass a Postgres advisory lock
 * instead (services/src/homes/lock.ts).
 */
import { open, readFile, rm, stat } from "node:fs/promises";

export type ReleaseLock = () => Promise<void>;

/** Cross-process lock port. `acquire` waits until the home is free. */
export interface HomeLock {
  acquire(homeKey: string): Promise<ReleaseLock>;
}

/** In-process FIFO mutex per key. */
export class KeyedMutex {
  readonly #tails = new Map<string, Promise<void>>();

  async acquire(key: string): Promise<ReleaseLock> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const current = new Promise<void>((resolve) => {
      release = resolve;
    });
    const tail = previous.then(() => current);
    this.#tails.set(key, tail);
    await previous;
    return async () => {
      release();
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    };
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Lock files in `dir`, one per home. Same-host only: that is where `DATA_DIR` is shared. */
export function fileHomeLock(dir: string, options: { pollMs?: number } = {}): HomeLock {
  const pollMs = options.pollMs ?? 25;
  return {
    async acquire(homeKey) {
      const file = `${dir}/${homeKey}.lock`;
      for (;;) {
        try {
          const handle = await open(file, "wx", 0o600);
          await handle.writeFile(`${process.pid}\n`);
          await handle.close();
          return async () => {
            await rm(file, { force: true });
          };
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
        }
        const owner = Number.parseInt(await readFile(file, "utf8").catch(() => ""), 10);
        const age = Date.now() - ((await stat(file).catch(() => undefined))?.mtimeMs ?? Date.now());
        const dead = Number.isInteger(owner) && owner > 0 ? !alive(owner) : age > 10_000;
        if (dead) {
          // The owner died holding it (e.g. SIGKILL mid-checkpoint): take it over.
          await rm(file, { force: true });
          continue;
        }
        await new Promise((resolve) => setTimeout(resolve, pollMs));
      }
    },
  };
}
