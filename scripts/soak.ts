/**
 * `pnpm soak [--minutes 10] [--bots 5] [--viewers 10]` (PER-4/OPS-4): 5 bots acting on
 * one real Docker computer through the API and 10 RFB viewers reading their screens through the
 * web proxy and gateway, for 10 minutes, with the error count and the RSS of every process
 * (API, worker, web; the computer's Xvfb, Chromium, x11vnc, supervisor) sampled each minute
 * (tests/support/soak.ts). Targets: 0 errors, memory flat within 10 % (last sample ÷ the first
 * after the one-minute warm-up). The figures are recorded for `pnpm bench` (suite "soak").
 * Exits 1 when a target is missed. Needs the Docker engine and the computer image.
 */
import { COMPUTER_IMAGE, dockerUnavailable } from "@rakazo/sandbox/testing";
import { recordFigures } from "../tests/support/figures.ts";
import { runSoak, soakGrowth, soakRows } from "../tests/support/soak.ts";

function option(flag: string, fallback: number): number {
  const at = process.argv.indexOf(flag);
  if (at === -1) return fallback;
  const value = Number(process.argv[at + 1]);
  if (!Number.isFinite(value) || value <= 0) {
    console.error(`${flag} takes a positive number`);
    process.exit(2);
  }
  return value;
}

const minutes = option("--minutes", 10);
const bots = option("--bots", 5);
const viewers = option("--viewers", 10);
const unavailable = await dockerUnavailable();
if (unavailable) {
  console.error(`pnpm soak needs Docker and the computer image: ${unavailable}`);
  process.exit(2);
}
console.log(`soak: ${bots} bots, ${viewers} viewers, ${minutes} min, sampled each minute`);
const result = await runSoak({
  bots,
  viewers,
  durationMs: minutes * 60_000,
  sampleMs: 60_000,
  image: COMPUTER_IMAGE,
  say: (line) => console.log(line),
});
const rows = soakRows(result, "≤ 1.1×");
console.log(`figures: ${recordFigures("soak", rows)}`);
console.log(`operations: ${JSON.stringify(result.operations)}`);
for (const [kind, { count, first }] of Object.entries(result.setupErrors))
  console.log(`(before the load, not counted) ${kind} ×${count}: ${first}`);
for (const [kind, { count, first }] of Object.entries(result.errors))
  console.log(`error ${kind} ×${count}: ${first}`);
for (const g of soakGrowth(result))
  console.log(
    `${g.group.padEnd(12)} ${(g.firstKib / 1024).toFixed(1)} → ${(g.lastKib / 1024).toFixed(1)} MiB (${g.ratio.toFixed(3)}×)`,
  );
const errors = rows[0]?.value ?? 1;
const grown = soakGrowth(result).filter((g) => !(g.ratio <= 1.1));
if (grown.length > 0) console.log(`grew more than 10 %: ${grown.map((g) => g.group).join(", ")}`);
process.exitCode = errors === 0 && grown.length === 0 && result.samples.length > 1 ? 0 : 1;
