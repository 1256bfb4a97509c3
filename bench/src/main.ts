/**
 * `pnpm bench`: every benchmark of the project, each figure beside a baseline measured in the
 * same run (never a timed assertion in a test), written as ONE report — JSON and Markdown in
 * `bench-results/` (or `--out <dir>`), whose paths are printed. Suites whose prerequisites are
 * missing (no Docker engine, no image) say so in the report and are left out; `--only <name>`
 * runs one suite. The figures the replica test, the soak and the fault drills record
 * (`bench-results/figures/*.json`, see tests/support/figures.ts) join the report as "recorded"
 * suites. `pnpm bench --compare <before.json> <after.json>` compares two reports and exits 1
 * when a figure regressed (docs/decisions.md).
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import {
  type BenchReportDocument,
  compareReports,
  FIGURES_DIR,
  REPORT_VERSION,
  RESULTS_DIR,
  type RecordedFigures,
  type ReportRow,
  type ReportSuite,
  renderComparison,
  renderMarkdown,
  toReportRow,
} from "./report.ts";
import type { BenchReport, BenchRow } from "./row.ts";

interface Suite {
  readonly name: string;
  readonly load: () => Promise<(report: BenchReport) => Promise<void>>;
}

/** Every suite `pnpm bench` runs, in order; a new bench is a file here and an entry below. */
const SUITES: readonly Suite[] = [
  { name: "screens", load: async () => (await import("./screens.ts")).benchGateway },
  { name: "screen-path", load: async () => (await import("./screen-path.ts")).benchScreenPath },
  { name: "web-app", load: async () => (await import("./web-app.ts")).benchWebApp },
  { name: "terminal", load: async () => (await import("./terminal.ts")).benchTerminal },
  { name: "desktops", load: async () => (await import("./desktops.ts")).benchDesktops },
  { name: "runtimes", load: async () => (await import("./runtimes.ts")).benchRuntimes },
  { name: "homes", load: async () => (await import("./homes.ts")).benchHomes },
  { name: "homes-chain", load: async () => (await import("./homes-chain.ts")).benchHomesChain },
  { name: "host", load: async () => (await import("./host.ts")).benchHost },
  { name: "remote", load: async () => (await import("./remote.ts")).benchRemote },
  { name: "api", load: async () => (await import("./api.ts")).benchApi },
  { name: "lifecycle", load: async () => (await import("./lifecycle.ts")).benchLifecycle },
  { name: "external-exec", load: async () => (await import("./external-exec.ts")).benchExternalExec },
];

const ROOT = path.join(import.meta.dirname, "../..");

function format(row: BenchRow): string {
  const num = (n: number) => (Math.abs(n) >= 100 ? n.toFixed(0) : n.toFixed(2));
  const parts = [`${row.name.padEnd(52)} ${num(row.value).padStart(10)} ${row.unit.padEnd(6)}`];
  if (row.baseline !== undefined) parts.push(`baseline ${num(row.baseline)} ${row.unit}`);
  if (row.ratio !== undefined) parts.push(`ratio ${row.ratio.toFixed(2)}×`);
  if (row.target) parts.push(`target ${row.target}`);
  return parts.join("  ");
}

function argument(flag: string): string | undefined {
  const at = process.argv.indexOf(flag);
  return at === -1 ? undefined : process.argv[at + 1];
}

function readReport(file: string): BenchReportDocument {
  const parsed = JSON.parse(readFileSync(file, "utf8")) as BenchReportDocument;
  if (parsed.version !== REPORT_VERSION || !Array.isArray(parsed.rows))
    throw new Error(`${file} is not a version ${REPORT_VERSION} bench report`);
  return parsed;
}

/** The figures tests recorded, newest file per suite; a suite measured in this run wins. */
function recordedFigures(skip: ReadonlySet<string>, only: string | undefined): RecordedFigures[] {
  let files: string[];
  try {
    files = readdirSync(FIGURES_DIR).filter((f) => f.endsWith(".json"));
  } catch {
    return [];
  }
  const out: RecordedFigures[] = [];
  for (const file of files.sort()) {
    try {
      const figures = JSON.parse(readFileSync(path.join(FIGURES_DIR, file), "utf8")) as RecordedFigures;
      if (skip.has(figures.suite) || (only && figures.suite !== only)) continue;
      out.push(figures);
    } catch (error) {
      console.log(`(ignoring ${file}: ${(error as Error).message})`);
    }
  }
  return out;
}

function commit(): string | undefined {
  try {
    return execFileSync("git", ["rev-parse", "HEAD"], { cwd: ROOT, encoding: "utf8" }).trim();
  } catch {
    return undefined;
  }
}

async function run(): Promise<number> {
  const only = argument("--only");
  const outDir = path.resolve(argument("--out") ?? RESULTS_DIR);
  const startedAt = new Date().toISOString();
  const suites: ReportSuite[] = [];
  const rows: ReportRow[] = [];
  let failed = false;
  for (const suite of SUITES) {
    if (only && suite.name !== only) continue;
    console.log(`\n## ${suite.name}`);
    try {
      const measure = await suite.load();
      await measure((row) => {
        rows.push(toReportRow(suite.name, row));
        console.log(format(row));
      });
      suites.push({ name: suite.name, source: "measured" });
    } catch (error) {
      failed = true;
      console.log(`(suite failed: ${(error as Error).message})`);
      suites.push({ name: suite.name, source: "measured", error: (error as Error).message });
    }
  }
  for (const figures of recordedFigures(new Set(suites.map((s) => s.name)), only)) {
    console.log(`\n## ${figures.suite} (recorded ${figures.recordedAt})`);
    suites.push({ name: figures.suite, source: "recorded", recordedAt: figures.recordedAt });
    for (const row of figures.rows) {
      rows.push(toReportRow(figures.suite, row));
      console.log(format(row));
    }
  }
  const sha = commit();
  const report: BenchReportDocument = {
    version: REPORT_VERSION,
    startedAt,
    finishedAt: new Date().toISOString(),
    host: {
      node: process.version,
      cpus: os.availableParallelism(),
      platform: `${os.platform()}-${os.arch()}`,
    },
    ...(sha ? { commit: sha } : {}),
    suites,
    rows,
  };
  mkdirSync(outDir, { recursive: true });
  const stem = path.join(outDir, `bench-${startedAt.replaceAll(":", "-").replace(/\..*$/, "")}`);
  writeFileSync(`${stem}.json`, `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(`${stem}.md`, renderMarkdown(report));
  console.log(`\nreport: ${stem}.md\njson:   ${stem}.json`);
  return failed ? 1 : 0;
}

function compare(): number {
  const at = process.argv.indexOf("--compare");
  const [beforeFile, afterFile] = [process.argv[at + 1], process.argv[at + 2]];
  if (!beforeFile || !afterFile) {
    console.error("usage: pnpm bench --compare <before.json> <after.json> [--tolerance 0.1]");
    return 2;
  }
  const tolerance = Number(argument("--tolerance") ?? "0.1");
  const result = compareReports(readReport(beforeFile), readReport(afterFile), tolerance);
  console.log(renderComparison(result));
  return result.some((r) => r.status === "regressed" || r.status === "now-missed") ? 1 : 0;
}

process.exitCode = process.argv.includes("--compare") ? compare() : await run();
