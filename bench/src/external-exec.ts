/**
 * `pnpm bench --only external-exec`: `true` run on a real Docker computer, p50 over
 * alternating samples in one run, one phase per ratio:
 * - `external/computer/exec` through the API over HTTP (the foreground exec goes through the
 *   supervisor's socket) beside `docker exec <container> true` by the CLI (target ≤ 0.25×);
 * - the bridge's `computer_exec` (bridge → API) beside the API alone (target ≤ 1.2×).
 * The stack is the Docker suites' (tests/support/external.ts): the API on loopback HTTP, the
 * bridge as a child process, the computer image of RAKAZO_COMPUTER_IMAGE.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { createExternalClient } from "@rakazo/client";
import { startExternalStack } from "../../tests/support/external.ts";
import type { BenchReport } from "./row.ts";

const run = promisify(execFile);
const SAMPLES = Number(process.env.BENCH_EXTERNAL_EXEC_SAMPLES ?? 60);

function p50(samples: readonly number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

async function timed(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

export async function benchExternalExec(report: BenchReport): Promise<void> {
  const stack = await startExternalStack();
  try {
    const made = await stack.bridge("computer_create", { scope: { conversationId: "bench-external-exec" } });
    if (made.status !== 200) throw new Error(`computer_create: ${JSON.stringify(made.json)}`);
    const { computerId, capability } = made.json.result as { computerId: string; capability: string };
    const api = createExternalClient({ baseUrl: stack.apiUrl, token: stack.externalToken });
    const exec = (argv: string[]) => api.call("external/computer/exec", { computerId, argv });
    // Until the supervisor listens, exec falls back to docker exec: wait for it.
    for (let i = 0; ; i += 1) {
      const parent = await exec(["sh", "-c", "tr '\\0' ' ' < /proc/$PPID/cmdline || true"]);
      if (parent.stdout.includes("supervisor.mjs")) break;
      if (i > 300) throw new Error("exec never ran through the supervisor");
      await new Promise((r) => setTimeout(r, 100));
    }
    const { stdout } = await run("docker", [
      "ps",
      "-q",
      "--no-trunc",
      "--filter",
      `label=rakazo.computer=${computerId}`,
    ]);
    const container = stdout.trim().split("\n")[0];
    if (!container) throw new Error("no container for the computer");

    const viaBridge = () => stack.bridge("computer_exec", { computerId, capability, argv: ["true"] });
    for (let i = 0; i < 5; i += 1) {
      await exec(["true"]);
      await viaBridge();
    }
    // Each ratio pairs its two paths sample by sample in a phase of their own: a `docker exec`
    // CLI run leaves the engine busy for milliseconds after it returns, so whatever runs right
    // after it in the same round pays for it (the bridge did, and read 1.4× instead of 1.15×).
    const cli = { api: [] as number[], cli: [] as number[] };
    for (let i = 0; i < SAMPLES; i += 1) {
      cli.api.push(await timed(() => exec(["true"])));
      cli.cli.push(await timed(() => run("docker", ["exec", container, "true"])));
    }
    const hop = { api: [] as number[], bridge: [] as number[] };
    for (let i = 0; i < SAMPLES; i += 1) {
      hop.api.push(await timed(() => exec(["true"])));
      hop.bridge.push(await timed(viaBridge));
    }
    report({
      name: "computer/exec `true` p50 via API (vs docker exec CLI)",
      value: p50(cli.api),
      unit: "ms",
      baseline: p50(cli.cli),
      ratio: p50(cli.api) / p50(cli.cli),
      target: "≤ 0.25×",
    });
    report({
      name: "computer/exec `true` p50 via bridge → API (vs API)",
      value: p50(hop.bridge),
      unit: "ms",
      baseline: p50(hop.api),
      ratio: p50(hop.bridge) / p50(hop.api),
      target: "≤ 1.2×",
    });
    await stack.bridge("computer_destroy", { computerId, capability });
  } finally {
    await stack.destroyAll().catch(() => undefined);
    await stack.close();
  }
}
