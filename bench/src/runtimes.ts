/**
 * The OCI runtimes side by side (RAKAZO_DOCKER_RUNTIME, docs/security.md): the same computer
 * image under runc and under runsc (gVisor), one computer each, both running and measured step
 * by step in turn in the same run. Every runsc row has its runc figure as the baseline:
 * - cold first screenshot of a new bot (after one warm-up desktop, as `desktops` does);
 * - warm observe p50 of that bot's desktop, and the supervisor round trip p50 (`desktop.list`,
 *   no desktop work: the socket hop, HTTP and JSON in the computer) that is part of it;
 * - exec p50 (`true` through the provider's command path);
 * - memory added per desktop, read by the host from the container's cgroup (PSS inside gVisor is
 *   the Sentry's own bookkeeping, not comparable).
 * Without a registered runsc the runc rows are reported alone and the report says why.
 */
import { request } from "node:http";
import { createProvider, type SupervisedDesktop } from "@rakazo/sandbox";
import type { BenchReport } from "./row.ts";

const IMAGE = process.env.RAKAZO_COMPUTER_IMAGE ?? "rakazo-computer:latest";
const SAMPLES = 20;

interface RuntimeFigures {
  readonly coldMs: number;
  readonly warmP50Ms: number;
  readonly hopP50Ms: number;
  readonly execP50Ms: number;
  readonly perDesktopMiB: number;
}

function p50(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

/** One answer of the local Docker engine's API, parsed. */
function engine<T>(path: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath: "/var/run/docker.sock", path }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")) as T));
    });
    req.on("error", reject);
    req.end();
  });
}

/** The container's memory as the host's cgroup counts it, page cache left out (as `docker stats`). */
async function cgroupMiB(ref: string): Promise<number> {
  const stats = await engine<{ memory_stats: { usage?: number; stats?: Record<string, number> } }>(
    `/containers/${ref}/stats?stream=false`,
  );
  const { usage = 0, stats: detail = {} } = stats.memory_stats;
  return (usage - (detail.total_inactive_file ?? detail.inactive_file ?? 0)) / 1024 ** 2;
}

interface Computer {
  readonly runtime: string;
  readonly ref: string;
  readonly desktop: SupervisedDesktop;
  readonly exec: () => Promise<unknown>;
  readonly close: () => Promise<void>;
}

async function computer(runtime: string): Promise<Computer> {
  const { mkdtemp, rm } = await import("node:fs/promises");
  const { tmpdir } = await import("node:os");
  const { join } = await import("node:path");
  const dataDir = await mkdtemp(join(tmpdir(), `rakazo-bench-${runtime}-`));
  const provider = await createProvider({ kind: "docker", image: IMAGE, dataDir, runtime });
  const stamp = `${runtime}${Date.now()}`;
  const close = async () => rm(dataDir, { recursive: true, force: true });
  try {
    const { ref } = await provider.provision({
      computerId: `cmp_bench_${stamp}`,
      mode: "team",
      homeKey: `home_${stamp}`,
    });
    const sandbox = provider.sandbox(ref);
    return {
      runtime,
      ref,
      desktop: sandbox.desktop as SupervisedDesktop,
      exec: () => sandbox.exec({ argv: ["true"] }),
      close: async () => {
        await provider.destroy(ref).catch(() => undefined);
        await close();
      },
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/**
 * Both computers run at once and every step alternates between them, so neither gets the other's
 * share of a loaded host or of a warm page cache.
 */
async function measure(runtimes: readonly string[]): Promise<Map<string, RuntimeFigures>> {
  const computers: Computer[] = [];
  try {
    for (const runtime of runtimes) computers.push(await computer(runtime));
    for (const c of computers) {
      await c.desktop.observe("bot_warmup");
      await c.desktop.release("bot_warmup");
    }
    const cold = new Map<string, number>();
    for (const c of computers) cold.set(c.runtime, await timed(() => c.desktop.observe("bot_a")));
    const warm = new Map<string, number[]>(computers.map((c) => [c.runtime, []]));
    const exec = new Map<string, number[]>(computers.map((c) => [c.runtime, []]));
    const hop = new Map<string, number[]>(computers.map((c) => [c.runtime, []]));
    for (let i = 0; i < SAMPLES; i++) {
      for (const c of computers) warm.get(c.runtime)?.push(await timed(() => c.desktop.observe("bot_a")));
      for (const c of computers) exec.get(c.runtime)?.push(await timed(c.exec));
      for (const c of computers) hop.get(c.runtime)?.push(await timed(() => c.desktop.list()));
    }
    const figures = new Map<string, RuntimeFigures>();
    for (const c of computers) {
      const before = await cgroupMiB(c.ref);
      await c.desktop.observe("bot_b");
      await c.desktop.observe("bot_c");
      await new Promise((done) => setTimeout(done, 3_000));
      const after = await cgroupMiB(c.ref);
      figures.set(c.runtime, {
        coldMs: cold.get(c.runtime) ?? Number.NaN,
        warmP50Ms: p50(warm.get(c.runtime) ?? []),
        hopP50Ms: p50(hop.get(c.runtime) ?? []),
        execP50Ms: p50(exec.get(c.runtime) ?? []),
        perDesktopMiB: (after - before) / 2,
      });
    }
    return figures;
  } finally {
    for (const c of computers) await c.close();
  }
}

export async function benchRuntimes(report: BenchReport): Promise<void> {
  const runtimes = (await engine<{ Runtimes?: Record<string, unknown> }>("/info")).Runtimes ?? {};
  const figures = await measure(runtimes.runsc ? ["runc", "runsc"] : ["runc"]);
  const runc = figures.get("runc") as RuntimeFigures;
  report({ name: "runc: cold first screenshot, new bot", value: runc.coldMs, unit: "ms" });
  report({ name: "runc: warm observe p50", value: runc.warmP50Ms, unit: "ms" });
  report({ name: "runc: supervisor round trip p50 (desktop.list)", value: runc.hopP50Ms, unit: "ms" });
  report({ name: "runc: exec p50 (true)", value: runc.execP50Ms, unit: "ms" });
  report({ name: "runc: memory added per desktop (host cgroup)", value: runc.perDesktopMiB, unit: "MiB" });
  const runsc = figures.get("runsc");
  if (!runsc) {
    throw new Error(
      "the engine has no runtime runsc (scripts/docker-engine.sh registers it when runsc is installed)",
    );
  }
  const row = (name: string, value: number, baseline: number, unit: string, target?: string) =>
    report({
      name: `runsc: ${name}`,
      value,
      unit,
      baseline,
      ratio: value / baseline,
      ...(target ? { target } : {}),
    });
  row("cold first screenshot, new bot", runsc.coldMs, runc.coldMs, "ms", "≤ 1.5×");
  row("warm observe p50", runsc.warmP50Ms, runc.warmP50Ms, "ms", "≤ 1.3×");
  row("supervisor round trip p50 (desktop.list)", runsc.hopP50Ms, runc.hopP50Ms, "ms");
  row("exec p50 (true)", runsc.execP50Ms, runc.execP50Ms, "ms");
  row("memory added per desktop (host cgroup)", runsc.perDesktopMiB, runc.perDesktopMiB, "MiB");
}
