/**
 * `DATA_DIR/launcher.json`: what a running launcher started (its pid, its children's, the
 * embedded Postgres's, the ports and the provider), for `./rakazo status` and `./rakazo stop`.
 * No secrets in it. Written atomically; removed when the launcher stops.
 */
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export type ChildName = "api" | "worker" | "web";

export interface LauncherState {
  readonly pid: number;
  readonly startedAt: string;
  readonly provider: string;
  readonly api: { readonly url: string; readonly port: number };
  readonly web: { readonly url: string; readonly port: number };
  /** The embedded Postgres, or absent when DATABASE_URL points elsewhere. */
  readonly postgres?: { readonly pid: number; readonly port: number };
  readonly children: Partial<Record<ChildName, number>>;
  readonly ready: boolean;
}

function stateFile(dataDir: string): string {
  return join(dataDir, "launcher.json");
}

export function readState(dataDir: string): LauncherState | undefined {
  const file = stateFile(dataDir);
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, "utf8")) as LauncherState;
  } catch {
    return undefined;
  }
}

export function writeState(dataDir: string, state: LauncherState): void {
  const file = stateFile(dataDir);
  writeFileSync(`${file}.tmp`, JSON.stringify(state, null, 2), { mode: 0o600 });
  renameSync(`${file}.tmp`, file);
}

export function removeState(dataDir: string): void {
  rmSync(stateFile(dataDir), { force: true });
}

/** Whether a process with this pid exists (signal 0 checks without sending anything). */
export function alive(pid: number | undefined): boolean {
  if (!pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
