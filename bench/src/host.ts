/**
 * `pnpm bench` rows for the host provider (PRV-6): a computer's cold first screenshot (provision,
 * supervisor start, first desktop, first PNG) and a warm observe, beside the same figures on
 * Docker with the computer image in the same run. Displays :1090–:1099 (the host test range).
 * Everything made is destroyed at the end.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createProvider, type SandboxProvider } from "@rakazo/sandbox";
import { bundleSupervisor } from "@rakazo/supervisor/bundle";
import type { BenchReport } from "./row.ts";

const WARM_SAMPLES = 10;

/**
 * Provision → first screenshot (cold; `provisionMs` is its provision part), then the p50 of
 * `samples` observes (warm; NaN without samples); destroys after.
 */
export async function measureFirstScreenshot(
  provider: SandboxProvider,
  samples = WARM_SAMPLES,
): Promise<{ coldMs: number; provisionMs: number; warmP50Ms: number }> {
  const computerId = `cmp_bench${randomBytes(6).toString("hex")}`;
  const started = performance.now();
  const { ref } = await provider.provision({ computerId, homeKey: computerId, mode: "team" });
  const provisionMs = performance.now() - started;
  try {
    const desktop = provider.sandbox(ref).desktop;
    if (!desktop) throw new Error(`${provider.kind} has no desktop`);
    await desktop.observe("bot_bench");
    const coldMs = performance.now() - started;
    const warm: number[] = [];
    for (let i = 0; i < samples; i += 1) {
      const t = performance.now();
      await desktop.observe("bot_bench");
      warm.push(performance.now() - t);
    }
    warm.sort((a, b) => a - b);
    return { coldMs, provisionMs, warmP50Ms: warm[Math.floor(warm.length / 2)] ?? Number.NaN };
  } finally {
    await provider.destroy(ref);
  }
}

export async function benchHost(report: BenchReport): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), "rakazo-bench-host-"));
  try {
    // The supervisor bundle the image build stages (build.sh --stage-supervisor bundles the same).
    const supervisorBundle = join(root, "supervisor.mjs");
    await writeFile(supervisorBundle, (await bundleSupervisor()).text);
    const host = await measureFirstScreenshot(
      await createProvider({
        kind: "host",
        dataDir: join(root, "host"),
        supervisorBundle,
        screenLimit: 2,
        displayBase: 1090,
        displayCount: 10,
      }),
    );
    const docker = await measureFirstScreenshot(
      await createProvider({
        kind: "docker",
        image: process.env.RAKAZO_COMPUTER_IMAGE ?? "rakazo-computer:latest",
        dataDir: join(root, "docker"),
      }),
    );
    report({
      name: "host: cold first screenshot (provision → PNG)",
      value: host.coldMs,
      unit: "ms",
      baseline: docker.coldMs,
      ratio: host.coldMs / docker.coldMs,
    });
    report({
      name: "host: warm observe p50",
      value: host.warmP50Ms,
      unit: "ms",
      baseline: docker.warmP50Ms,
      ratio: host.warmP50Ms / docker.warmP50Ms,
    });
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}
