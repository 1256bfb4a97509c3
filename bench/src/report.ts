/**
 * The bench report: every row of a `pnpm bench` run, plus the figures the replica
 * test, the soak and the fault drills recorded, as one JSON document and its Markdown rendering;
 * and the comparison of two such documents, which flags regressions. Pure functions only: the
 * runner (main.ts) does the measuring and the file writing.
 */
import path from "node:path";
import type { BenchRow } from "./row.ts";

export const REPORT_VERSION = 1;

/** Where `pnpm bench` writes its reports, and where tests record their figures. */
export const RESULTS_DIR = path.join(import.meta.dirname, "..", "..", "bench-results");
export const FIGURES_DIR = path.join(RESULTS_DIR, "figures");

/** A row as the report keeps it: which suite, and whether its target was met. */
export interface ReportRow extends BenchRow {
  readonly suite: string;
  /** "met" / "missed" when the target can be read as a bound on the ratio or value. */
  readonly verdict?: "met" | "missed";
}

export interface ReportSuite {
  readonly name: string;
  /** "measured" by this run, "recorded" by a test (its file and time), or why it is absent. */
  readonly source: "measured" | "recorded";
  readonly recordedAt?: string;
  readonly error?: string;
}

export interface BenchReportDocument {
  readonly version: typeof REPORT_VERSION;
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly host: { readonly node: string; readonly cpus: number; readonly platform: string };
  readonly commit?: string;
  readonly suites: readonly ReportSuite[];
  readonly rows: readonly ReportRow[];
}

/** A figure file a test writes (see `recordFigures` in tests/support/figures.ts). */
export interface RecordedFigures {
  readonly suite: string;
  readonly recordedAt: string;
  readonly rows: readonly BenchRow[];
}

interface Bound {
  readonly op: "≥" | "≤" | ">" | "<" | "=";
  readonly limit: number;
  /** The bound is on the ratio (`×`) rather than the value. */
  readonly onRatio: boolean;
}

/**
 * Reads a target such as "≥ 0.9×", "<= 1.1x", "< 1 ms", "0" or "= 0 errors". Anything else (a
 * prose target) has no bound and no verdict.
 */
export function parseTarget(target: string | undefined): Bound | undefined {
  if (!target) return undefined;
  const match = /^\s*(≥|>=|≤|<=|>|<|=|==)?\s*(-?\d+(?:\.\d+)?)\s*(×|x\b)?/u.exec(target);
  if (!match) return undefined;
  const ops: Record<string, Bound["op"]> = { "≥": "≥", ">=": "≥", "≤": "≤", "<=": "≤", ">": ">", "<": "<" };
  const op = match[1] ? (ops[match[1]] ?? "=") : "=";
  return { op, limit: Number(match[2]), onRatio: match[3] !== undefined };
}

export function verdict(row: BenchRow): "met" | "missed" | undefined {
  const bound = parseTarget(row.target);
  if (!bound) return undefined;
  const measured = bound.onRatio ? row.ratio : row.value;
  if (measured === undefined || !Number.isFinite(measured)) return undefined;
  const ok = {
    "≥": measured >= bound.limit,
    "≤": measured <= bound.limit,
    ">": measured > bound.limit,
    "<": measured < bound.limit,
    "=": measured === bound.limit,
  }[bound.op];
  return ok ? "met" : "missed";
}

/**
 * Which way is better for a row: its `better` when the suite says so, else read from its target
 * ("≥" → higher), else from its unit (throughputs higher; times, sizes and counts lower).
 */
export function betterDirection(row: BenchRow): "higher" | "lower" {
  if (row.better) return row.better;
  const bound = parseTarget(row.target);
  if (bound && (bound.op === "≥" || bound.op === ">")) return "higher";
  if (bound && (bound.op === "≤" || bound.op === "<" || bound.op === "=")) return "lower";
  return /\/s$|per s|×$/.test(row.unit) ? "higher" : "lower";
}

export function toReportRow(suite: string, row: BenchRow): ReportRow {
  const v = verdict(row);
  return v ? { ...row, suite, verdict: v } : { ...row, suite };
}

function num(n: number | undefined): string {
  if (n === undefined || !Number.isFinite(n)) return "—";
  if (Number.isInteger(n)) return String(n);
  return Math.abs(n) >= 100 ? n.toFixed(0) : n.toFixed(2);
}

function cell(text: string): string {
  return text.replaceAll("|", "\\|").replaceAll("\n", " ");
}

export function renderMarkdown(report: BenchReportDocument): string {
  const lines = [
    "# Rakazo bench report",
    "",
    `Run ${report.startedAt} → ${report.finishedAt} on ${report.host.platform}, ${report.host.cpus} CPUs, Node ${report.host.node}${report.commit ? `, commit ${report.commit.slice(0, 12)}` : ""}.`,
    "Every ratio compares the figure with its baseline measured in the same run (recorded suites: in the same test run).",
    "",
  ];
  const missed = report.rows.filter((r) => r.verdict === "missed");
  lines.push(
    missed.length === 0
      ? "All rows with a numeric target meet it."
      : `**${missed.length} row(s) miss their target:** ${missed.map((r) => `${r.suite}: ${r.name}`).join("; ")}.`,
    "",
  );
  for (const suite of report.suites) {
    const source = suite.source === "recorded" ? ` (recorded by its test at ${suite.recordedAt ?? "?"})` : "";
    lines.push(`## ${suite.name}${source}`, "");
    if (suite.error) {
      lines.push(`_Not in this report: ${cell(suite.error)}_`, "");
      continue;
    }
    const rows = report.rows.filter((r) => r.suite === suite.name);
    lines.push(
      "| figure | value | unit | baseline | ratio | target | verdict |",
      "|---|---:|---|---:|---:|---|---|",
    );
    for (const r of rows) {
      lines.push(
        `| ${cell(r.name)} | ${num(r.value)} | ${cell(r.unit)} | ${num(r.baseline)} | ${r.ratio === undefined ? "—" : `${r.ratio.toFixed(2)}×`} | ${cell(r.target ?? "—")} | ${r.verdict ?? "—"} |`,
      );
    }
    lines.push("");
  }
  return lines.join("\n");
}

export interface Comparison {
  readonly suite: string;
  readonly name: string;
  readonly before?: number;
  readonly after?: number;
  /** after ÷ before of the compared quantity (the ratio when both rows have one, else the value). */
  readonly change?: number;
  readonly compared: "ratio" | "value";
  readonly status: "regressed" | "improved" | "same" | "new" | "gone" | "now-missed";
}

/**
 * Matches rows by suite and name. A row regressed when its compared quantity moved the wrong way
 * by more than `tolerance` (default 10 %), or when it met its target before and misses it now.
 * The ratio is compared when both runs have one: it carries its own same-run baseline, so a
 * slower machine does not read as a regression.
 */
export function compareReports(
  before: BenchReportDocument,
  after: BenchReportDocument,
  tolerance = 0.1,
): Comparison[] {
  const key = (r: ReportRow) => `${r.suite}\u0000${r.name}`;
  const old = new Map(before.rows.map((r) => [key(r), r]));
  const out: Comparison[] = [];
  for (const row of after.rows) {
    const prev = old.get(key(row));
    old.delete(key(row));
    if (!prev) {
      out.push({ suite: row.suite, name: row.name, after: row.value, compared: "value", status: "new" });
      continue;
    }
    const compared = row.ratio !== undefined && prev.ratio !== undefined ? "ratio" : "value";
    const a = compared === "ratio" ? (prev.ratio as number) : prev.value;
    const b = compared === "ratio" ? (row.ratio as number) : row.value;
    const change = a === 0 ? (b === 0 ? 1 : Number.POSITIVE_INFINITY) : b / a;
    // For a ratio the direction is the target's; for a value, the unit's.
    const better = betterDirection(compared === "ratio" ? { ...row, unit: "×" } : row);
    const worse = better === "higher" ? change < 1 - tolerance : change > 1 + tolerance;
    const improved = better === "higher" ? change > 1 + tolerance : change < 1 - tolerance;
    const nowMissed = prev.verdict === "met" && row.verdict === "missed";
    const status = worse ? "regressed" : nowMissed ? "now-missed" : improved ? "improved" : "same";
    out.push({ suite: row.suite, name: row.name, before: a, after: b, change, compared, status });
  }
  for (const prev of old.values()) {
    out.push({ suite: prev.suite, name: prev.name, before: prev.value, compared: "value", status: "gone" });
  }
  return out;
}

export function renderComparison(rows: readonly Comparison[]): string {
  const flagged = rows.filter((r) => r.status === "regressed" || r.status === "now-missed");
  const lines = [
    flagged.length === 0 ? "No regressions." : `**${flagged.length} regression(s).**`,
    "",
    "| suite | figure | compared | before | after | change | status |",
    "|---|---|---|---:|---:|---:|---|",
  ];
  for (const r of rows) {
    const change = r.change === undefined ? "—" : `${((r.change - 1) * 100).toFixed(1)} %`;
    const status = r.status === "regressed" || r.status === "now-missed" ? `**${r.status}**` : r.status;
    lines.push(
      `| ${cell(r.suite)} | ${cell(r.name)} | ${r.compared} | ${num(r.before)} | ${num(r.after)} | ${change} | ${status} |`,
    );
  }
  return lines.join("\n");
}
