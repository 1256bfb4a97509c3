/**
 * Each slot's latest generation, kept in `<runDir>/slots.json` so that (index, generation) is
 * never reused, not even across a daemon restart (SCR-2: an old ticket or socket path must never
 * reach a later bot's desktop). Written by rename, so a crash leaves the old file or the new one.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";

const fileIn = (runDir: string): string => path.join(runDir, "slots.json");

/** Generation by slot index; an unreadable or missing file counts as none used yet. */
export function loadGenerations(runDir: string): Record<string, number> {
  try {
    const parsed = JSON.parse(readFileSync(fileIn(runDir), "utf8")) as {
      generations?: Record<string, number>;
    };
    return parsed.generations ?? {};
  } catch {
    return {};
  }
}

export function saveGenerations(runDir: string, generations: Record<number, number>): void {
  mkdirSync(runDir, { recursive: true });
  const tmp = `${fileIn(runDir)}.tmp`;
  writeFileSync(tmp, JSON.stringify({ generations }));
  renameSync(tmp, fileIn(runDir));
}
