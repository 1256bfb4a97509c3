/**
 * `pnpm bench --only external-exec` (issue 19): `true` run on a real Docker computer, p50 over
 * alternating rounds in one run:
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
import type { BenchReport } from "../bench.ts";

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

    const viaApi: number[] = [];
    const viaCli: number[] = [];
    const viaBridge: number[] = [];
    for (let i = 0; i < 5; i += 1) {
      await exec(["true"]);
      await stack.bridge("computer_exec", { computerId, capability, argv: ["true"] });
    }
    for (let i = 0; i < SAMPLES; i += 1) {
      viaApi.push(await timed(() => exec(["true"])));
      viaCli.push(await timed(() => run("docker", ["exec", container, "true"])));
      viaBridge.push(
        await timed(() => stack.bridge("computer_exec", { computerId, capability, argv: ["true"] })),
      );
    }
    const apiP50 = p50(viaApi);
    const cliP50 = p50(viaCli);
    const bridgeP50 = p50(viaBridge);
    report({
      name: "computer/exec `true` p50 via API (vs docker exec CLI)",
      value: apiP50,
      unit: "ms",
      baseline: cliP50,
      ratio: apiP50 / cliP50,
      target: "≤ 0.25×",
    });
    report({
      name: "computer/exec `true` p50 via bridge → API (vs API)",
      value: bridgeP50,
      unit: "ms",
      baseline: apiP50,
      ratio: bridgeP50 / apiP50,
      target: "≤ 1.2×",
    });
    await stack.bridge("computer_destroy", { computerId, capability });
  } finally {
    await stack.destroyAll().catch(() => undefined);
    await stack.close();
  }
}
