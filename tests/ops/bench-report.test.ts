/**
 * The bench report: targets read as verdicts, and the comparison of two reports
 * flags a figure that moved the wrong way — by its same-run ratio when it has one.
 */

import {
  type BenchReportDocument,
  compareReports,
  renderComparison,
  renderMarkdown,
  toReportRow,
  verdict,
} from "@rakazo/bench/report";
import { describe, expect, it } from "vitest";

function report(rows: BenchReportDocument["rows"]): BenchReportDocument {
  return {
    version: 1,
    startedAt: "2026-01-01T00:00:00.000Z",
    finishedAt: "2026-01-01T00:01:00.000Z",
    host: { node: "v24", cpus: 2, platform: "linux-x64" },
    suites: [...new Set(rows.map((r) => r.suite))].map((name) => ({ name, source: "measured" as const })),
    rows,
  };
}

describe("bench report", () => {
  it("reads targets on the ratio or the value", () => {
    expect(verdict({ name: "a", value: 1, unit: "MB/s", ratio: 0.95, target: "≥ 0.9×" })).toBe("met");
    expect(verdict({ name: "a", value: 1, unit: "MB/s", ratio: 0.8, target: "≥ 0.9×" })).toBe("missed");
    expect(verdict({ name: "b", value: 1.2, unit: "ms", target: "< 1 ms" })).toBe("missed");
    expect(verdict({ name: "c", value: 0, unit: "errors", target: "= 0" })).toBe("met");
    expect(verdict({ name: "d", value: 3, unit: "x", target: "about parity" })).toBeUndefined();
  });

  it("flags a regressed ratio and a target now missed, not a slower machine", () => {
    const before = report([
      toReportRow("api", {
        name: "get",
        value: 3000,
        unit: "req/s",
        baseline: 6000,
        ratio: 0.5,
        target: "≥ 0.5×",
      }),
      toReportRow("screens", { name: "rtt", value: 0.3, unit: "ms", target: "< 1 ms" }),
      toReportRow("homes", {
        name: "tput",
        value: 100,
        unit: "MB/s",
        baseline: 100,
        ratio: 1,
        target: "≥ 0.9×",
      }),
    ]);
    const after = report([
      // Half the speed on a slower machine, same ratio: not a regression.
      toReportRow("api", {
        name: "get",
        value: 1500,
        unit: "req/s",
        baseline: 3000,
        ratio: 0.5,
        target: "≥ 0.5×",
      }),
      toReportRow("screens", { name: "rtt", value: 0.9, unit: "ms", target: "< 1 ms" }),
      toReportRow("homes", {
        name: "tput",
        value: 70,
        unit: "MB/s",
        baseline: 100,
        ratio: 0.7,
        target: "≥ 0.9×",
      }),
      toReportRow("soak", { name: "errors", value: 0, unit: "errors", target: "= 0" }),
    ]);
    const result = compareReports(before, after);
    const status = Object.fromEntries(result.map((r) => [`${r.suite}/${r.name}`, r.status]));
    expect(status).toEqual({
      "api/get": "same",
      "screens/rtt": "regressed",
      "homes/tput": "regressed",
      "soak/errors": "new",
    });
    expect(renderComparison(result)).toContain("**2 regression(s).**");
    expect(renderMarkdown(after)).toContain("| tput | 70 | MB/s | 100 | 0.70× | ≥ 0.9× | missed |");
  });
});
