/**
 * What every bench suite reports, declared once: the suites (bench/src/*.ts), the report
 * (report.ts), the figures tests record (tests/support/figures.ts) and the soak all use it.
 */

/** One figure of a suite. */
export interface BenchRow {
  readonly name: string;
  readonly value: number;
  readonly unit: string;
  /** The same measurement done the plain way, in this run. */
  readonly baseline?: number;
  /** value ÷ baseline (or the reverse for throughputs, as the suite states). */
  readonly ratio?: number;
  /** A bound the report reads ("≥ 0.9×", "< 1 ms") or prose, shown as given. */
  readonly target?: string;
  /** Which way is better, when neither the target nor the unit says (report.ts). */
  readonly better?: "higher" | "lower";
}

/** How a suite hands the runner a row. */
export type BenchReport = (row: BenchRow) => void;
