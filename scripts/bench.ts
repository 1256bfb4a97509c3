/**
 * `pnpm bench`: every benchmark of the project, each figure beside a baseline measured in the
 * same run (never a timed assertion in a test). Suites whose prerequisites are missing (no
 * Docker engine, no image) say so and are left out; `--only <name>` runs one suite.
 */
export interface BenchRow {
  readonly name: string;
  readonly value: number;
  readonly unit: string;
  /** The same measurement done the plain way, in this run. */
  readonly baseline?: number;
  /** value ÷ baseline (or the reverse for throughputs, as the suite states). */
  readonly ratio?: number;
  readonly target?: string;
}

export type BenchReport = (row: BenchRow) => void;

interface Suite {
  readonly name: string;
  readonly load: () => Promise<(report: BenchReport) => Promise<void>>;
}

const SUITES: readonly Suite[] = [
  {
    name: "screens",
    load: async () => (await import("@rakazo/web/bench")).benchGateway,
  },
  {
    name: "web-app",
    load: async () => (await import("@rakazo/web/bench/app")).benchWebApp,
  },
  {
    name: "terminal",
    load: async () => (await import("@rakazo/web/bench/terminal")).benchTerminal,
  },
  {
    name: "desktops",
    load: async () => (await import("@rakazo/supervisor/bench")).benchDesktops,
  },
  {
    name: "homes",
    load: async () => (await import("@rakazo/homes/bench")).benchHomes,
  },
  {
    name: "host",
    load: async () => (await import("@rakazo/sandbox/bench")).benchHost,
  },
];

function format(row: BenchRow): string {
  const num = (n: number) => (Math.abs(n) >= 100 ? n.toFixed(0) : n.toFixed(2));
  const parts = [`${row.name.padEnd(52)} ${num(row.value).padStart(10)} ${row.unit.padEnd(6)}`];
  if (row.baseline !== undefined) parts.push(`baseline ${num(row.baseline)} ${row.unit}`);
  if (row.ratio !== undefined) parts.push(`ratio ${row.ratio.toFixed(2)}×`);
  if (row.target) parts.push(`target ${row.target}`);
  return parts.join("  ");
}

const only = process.argv.includes("--only") ? process.argv[process.argv.indexOf("--only") + 1] : undefined;
let failed = false;
for (const suite of SUITES) {
  if (only && suite.name !== only) continue;
  console.log(`\n## ${suite.name}`);
  try {
    const run = await suite.load();
    await run((row) => console.log(format(row)));
  } catch (error) {
    failed = true;
    console.log(`(suite failed: ${(error as Error).message})`);
  }
}
process.exitCode = failed ? 1 : 0;
