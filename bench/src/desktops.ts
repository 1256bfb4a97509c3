/**
 * Desktop benchmarks, run against a real Docker computer from the image. Each figure
 * is printed beside a baseline measured in the same run, on the same container:
 * - cold first screenshot for a new bot (through API-side client → socket → supervisor) vs the
 *   bare commands that start one desktop by hand and take one screenshot;
 * - warm observe p50/p95 vs one bare screenshot command timed inside the computer;
 * - memory (PSS) added per extra desktop vs the PSS of one hand-started desktop (the extra
 *   desktops have no viewer, so no x11vnc: it starts on a desktop's first viewer); what x11vnc
 *   adds once a desktop is viewed, and that first viewer's wait for it (`desktop.openScreen`,
 *   what the gateway does before its first viewer's 101) beside a later viewer's;
 * - disk per released bot profile, and live desktops per GiB (a 1 GiB computer filled until the
 *   supervisor's admission refuses).
 */
import { createProvider, type SandboxProvider, type SupervisedDesktop } from "@rakazo/sandbox";
import type { BenchReport } from "./row.ts";

const IMAGE = process.env.RAKAZO_COMPUTER_IMAGE ?? "rakazo-computer:latest";

export const BARE_DESKTOP = `
set -e
Xvfb :90 -screen 0 1280x800x24 -nolisten tcp >/dev/null 2>&1 &
until [ -e /tmp/.X11-unix/X90 ]; do sleep 0.01; done
DISPLAY=:90 chromium --no-sandbox --disable-gpu --no-first-run --disable-background-networking \\
  --disable-component-update --disable-sync --disable-dev-shm-usage --test-type \\
  --remote-debugging-address=127.0.0.1 --remote-debugging-port=9390 \\
  --user-data-dir=/tmp/bench-bare-profile about:blank >/dev/null 2>&1 &
until (exec 3<>/dev/tcp/127.0.0.1/9390) 2>/dev/null; do sleep 0.01; done
x11vnc -display :90 -unixsock /tmp/bench-bare.sock -rfbport 0 -forever -shared -nopw -q >/dev/null 2>&1 &
until [ -S /tmp/bench-bare.sock ]; do sleep 0.01; done
DISPLAY=:90 maim /tmp/bench-bare.png
`;

const BARE_SCREENSHOTS = `
for i in $(seq 1 30); do
  s=$(date +%s%N); DISPLAY=:90 maim /tmp/bench-bare.png; e=$(date +%s%N); echo $(( (e - s) / 1000 ))
done`;

// Sum of PSS (KiB) of the workspace user's processes whose command line matches.
const PSS = (pattern: string) => `
total=0
for p in $(pgrep -u 1000 -f '${pattern}'); do
  v=$(awk '/^Pss:/ {print $2}' /proc/$p/smaps_rollup 2>/dev/null || echo 0); total=$((total + \${v:-0}))
done
echo $total`;

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

async function timed<T>(fn: () => Promise<T>): Promise<[number, T]> {
  const start = performance.now();
  const value = await fn();
  return [performance.now() - start, value];
}

export async function benchDesktops(report: BenchReport): Promise<void> {
  const { mkdtemp, rm } = await import("node:fs/promises");
  const { tmpdir } = await import("node:os");
  const { join } = await import("node:path");
  const dataDir = await mkdtemp(join(tmpdir(), "rakazo-bench-"));
  let provider: SandboxProvider | undefined;
  let ref: string | undefined;
  try {
    provider = await createProvider({ kind: "docker", image: IMAGE, dataDir });
    const computerId = `cmp_bench${Date.now()}`;
    ({ ref } = await provider.provision({ computerId, mode: "team", homeKey: `home_bench${Date.now()}` }));
    const sandbox = provider.sandbox(ref);
    const desktop = sandbox.desktop as SupervisedDesktop;
    const sh = async (script: string) => {
      const result = await sandbox.exec({ argv: ["bash", "-c", script], timeoutMs: 120_000 });
      if (result.exitCode !== 0) throw new Error(`bench script failed: ${result.stderr}`);
      return result.stdout;
    };
    // Warm the image's pages (first Chromium start in a container reads ~350 MB from disk).
    await desktop.observe("bot_bench_warmup");
    await desktop.release("bot_bench_warmup");

    const [coldMs] = await timed(() => desktop.observe("bot_bench_a"));
    const [bareMs] = await timed(() => sh(BARE_DESKTOP));
    report({
      name: "cold first screenshot, new bot",
      value: coldMs,
      unit: "ms",
      baseline: bareMs,
      ratio: coldMs / bareMs,
      target: "≤ 1.5×",
    });

    const warm: number[] = [];
    for (let i = 0; i < 30; i++) warm.push((await timed(() => desktop.observe("bot_bench_a")))[0]);
    const bare = (await sh(BARE_SCREENSHOTS))
      .trim()
      .split("\n")
      .map((us) => Number(us) / 1000);
    report({
      name: "warm observe p50 (host → socket → supervisor)",
      value: percentile(warm, 50),
      unit: "ms",
      baseline: percentile(bare, 50),
      target: "≤ 150 ms",
    });
    report({
      name: "warm observe p95",
      value: percentile(warm, 95),
      unit: "ms",
      baseline: percentile(bare, 95),
    });

    const desktopPss = async () =>
      Number((await sh(PSS("Xvfb :1[0-9]|chromium|x11vnc -display :1[0-9]"))).trim());
    const one = await desktopPss();
    await desktop.observe("bot_bench_b");
    await desktop.observe("bot_bench_c");
    await new Promise((done) => setTimeout(done, 3_000));
    const three = await desktopPss();
    const bareDesktop = Number((await sh(PSS("Xvfb :90|bench-bare-profile|bench-bare.sock"))).trim());
    const perExtra = (three - one) / 2 / 1024;
    report({
      name: "memory added per extra desktop (PSS)",
      value: perExtra,
      unit: "MiB",
      baseline: bareDesktop / 1024,
      ratio: perExtra / (bareDesktop / 1024),
      target: "≤ 150 MiB",
    });
    await benchFirstViewer(report, desktop, async () =>
      Number((await sh(PSS("Xvfb :1[0-9]|x11vnc -display :1[0-9]"))).trim()),
    );
    // Profiles cost disk, not processes (CMP-4): what a used-then-released bot leaves behind.
    for (const botId of ["bot_bench_a", "bot_bench_b", "bot_bench_c"]) await desktop.release(botId);
    const [profiles, kib] = (
      await sh("cd ~/rakazo-home/.browser-profiles && ls -1 | wc -l && du -sk . | cut -f1")
    )
      .trim()
      .split("\n")
      .map(Number) as [number, number];
    report({ name: "disk per released bot profile", value: kib / profiles / 1024, unit: "MiB" });
  } finally {
    if (provider && ref) await provider.destroy(ref);
    await rm(dataDir, { recursive: true, force: true });
  }
  await benchDesktopsPerGiB(report);
}

/**
 * The first viewer of bots b and c starts their x11vnc: the wait for it against a later viewer's
 * call, and the PSS x11vnc then adds to each desktop, read off Xvfb + x11vnc alone (x11vnc's
 * SysV polling images are shared with Xvfb; Chromium's own drift would drown the figure). An
 * image whose supervisor predates `desktop.openScreen` starts x11vnc with every desktop; it
 * reports neither.
 */
async function benchFirstViewer(
  report: BenchReport,
  desktop: SupervisedDesktop,
  screenPss: () => Promise<number>,
): Promise<void> {
  const unviewedPss = await screenPss();
  const first: number[] = [];
  const later: number[] = [];
  for (const botId of ["bot_bench_b", "bot_bench_c"]) {
    const opened = await timed(() => desktop.openScreen(botId)).catch((error: Error) => error);
    if (opened instanceof Error) {
      if (/openScreen/.test(opened.message)) return;
      throw opened;
    }
    first.push(opened[0]);
    later.push((await timed(() => desktop.openScreen(botId)))[0]);
  }
  report({
    name: "first viewer's wait for x11vnc (desktop.openScreen)",
    value: Math.max(...first),
    unit: "ms",
    baseline: Math.max(...later),
  });
  await new Promise((done) => setTimeout(done, 3_000));
  report({
    name: "memory x11vnc adds to a viewed desktop (PSS)",
    value: ((await screenPss()) - unviewedPss) / 2 / 1024,
    unit: "MiB",
  });
}

/**
 * Live desktops per GiB: a 1 GiB computer (1.5 CPUs, 2048 pids) filled with controlled
 * desktops until the supervisor's admission refuses; beside it, the count the bare per-desktop
 * PSS would allow in the same GiB.
 */
async function benchDesktopsPerGiB(report: BenchReport): Promise<void> {
  const { mkdtemp, rm } = await import("node:fs/promises");
  const { tmpdir } = await import("node:os");
  const { join } = await import("node:path");
  const dataDir = await mkdtemp(join(tmpdir(), "rakazo-bench-gib-"));
  const provider = await createProvider({
    kind: "docker",
    image: IMAGE,
    dataDir,
    memoryBytes: 1024 ** 3,
    nanoCpus: 1_500_000_000,
    pidsLimit: 2048,
  });
  let ref: string | undefined;
  try {
    ({ ref } = await provider.provision({
      computerId: `cmp_benchgib${Date.now()}`,
      mode: "team",
      homeKey: `home_benchgib${Date.now()}`,
    }));
    const sandbox = provider.sandbox(ref);
    const desktop = sandbox.desktop as SupervisedDesktop;
    // An image built before admission existed would fill the computer until it thrashes.
    if ((await desktop.capacity()).memoryMaxBytes === null) {
      throw new Error(
        `${IMAGE}'s supervisor has no admission yet; rebuild it (infra/sandboxes/image/build.sh)`,
      );
    }
    let live = 0;
    let reason = "none";
    for (let i = 0; i < 24; i += 1) {
      try {
        await desktop.observe(`bot_gib_${i}`);
        await desktop.setControlled(`bot_gib_${i}`, true);
        live += 1;
      } catch (error) {
        reason = String(
          (error as { details?: { reason?: string } }).details?.reason ?? (error as Error).message,
        );
        break;
      }
    }
    const capacity = await desktop.capacity();
    const usedMiB = (capacity.memoryUsedBytes ?? 0) / 1024 ** 2;
    report({
      name: `live desktops per GiB (admitted until refused: ${reason})`,
      value: live,
      unit: "desktops",
      target: "≥ 5",
    });
    report({
      name: "cgroup memory per live desktop (1 GiB computer)",
      value: usedMiB / Math.max(1, live),
      unit: "MiB",
    });
  } finally {
    if (ref) await provider.destroy(ref);
    await rm(dataDir, { recursive: true, force: true });
  }
}
