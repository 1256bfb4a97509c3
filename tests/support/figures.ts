/**
 * Figures a test measured (the replica test, the soak, the fault drills) for the bench report:
 * written to `bench-results/figures/<suite>.json`, read by `pnpm bench` as a "recorded" suite
 * (bench/src/main.ts). Counts and ratios only; a test never asserts on time.
 */
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import { FIGURES_DIR, type RecordedFigures } from "@rakazo/bench/report";
import type { BenchRow } from "@rakazo/bench/row";

export function recordFigures(suite: string, rows: readonly BenchRow[]): string {
  mkdirSync(FIGURES_DIR, { recursive: true });
  const file = path.join(FIGURES_DIR, `${suite}.json`);
  const figures: RecordedFigures = { suite, recordedAt: new Date().toISOString(), rows };
  // Whole file or nothing: a report never reads half a figure file.
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, `${JSON.stringify(figures, null, 2)}\n`);
  renameSync(temp, file);
  return file;
}
