/**
 * `pnpm bench --only screen-path`: the screen path end to end, as a person
 * sees it. A real desktop on this host started exactly as the supervisor starts one (Xvfb +
 * Chromium + x11vnc on a Unix socket), the real ComputerGateway in front of it, and the real web
 * service proxying to the gateway — each its own process (screen-path-peer.ts). The same RFB
 * viewer (rfb-client.ts) reads the x11vnc socket directly (the baseline) and through web proxy +
 * gateway with a capability, alternately, in the same run:
 * - full-frame raw updates: non-incremental 1280×800 updates back to back, MiB/s (target ≥ 0.95×
 *   direct);
 * - input-to-pixel latency: a key event (control capability) until the first framebuffer update
 *   showing it — Chromium's focused field draws the character — median ms (target ≤ 1.05× direct);
 * - frame rate: on a second desktop whose page animates (a 400×300 box recoloured every animation
 *   frame), non-empty incremental updates per second with one request always outstanding, as a
 *   viewer keeps it (target ≥ 0.95× direct).
 * The synthetic-server gateway micro-bench stays in screens.bench.ts as the component figure.
 * Needs Xvfb, x11vnc, xdotool and Chromium on the host; without them the suite says so.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import {
  generateScreenKeys,
  mintScreenCapability,
  parseScreenKeys,
  type ScreenKeyring,
} from "@rakazo/screens";
import { BENCH_BOT, BENCH_COMPUTER } from "./constants.ts";
import { openRfb, type RfbSession } from "./rfb-client.ts";
import { direct, type Stream, viaWebSocketRaw } from "./rfb-stream.ts";
import type { BenchReport } from "./row.ts";

/** Display of the bench's desktop: helper i22b's assigned host range is :1700–:1799. */
const DISPLAY = Number(process.env.RAKAZO_BENCH_DISPLAY ?? 1700);
const FRAMES = 30;
const THROUGHPUT_ROUNDS = 5;
const LATENCY_ROUNDS = 25;
const FRAME_RATE_ROUNDS = 4;
const FRAME_RATE_SECONDS = 3;
const KEYSYM_A = 0x61;
const KEYSYM_BACKSPACE = 0xff08;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface PeerReady {
  readonly vncSocket?: string;
  readonly url?: string;
}

function startPeer(
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ child: ChildProcess; ready: PeerReady }> {
  const peer = fileURLToPath(new URL("./screen-path-peer.ts", import.meta.url));
  const child = spawn(process.execPath, [peer, ...args], { env, stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolve, reject) => {
    child.stdout?.once("data", (d: Buffer) => resolve({ child, ready: JSON.parse(d.toString()) }));
    child.once("exit", (code) => reject(new Error(`${args[0]} peer exited ${code}`)));
  });
}

function missingTools(): string | undefined {
  for (const tool of ["Xvfb", "x11vnc", "xdotool", "chromium"]) {
    try {
      execFileSync("which", [tool], { stdio: "ignore" });
    } catch {
      return `${tool} is not installed`;
    }
  }
  return undefined;
}

/** Full-frame raw updates back to back; MiB/s of pixel data. */
async function fullFrames(open: () => Promise<Stream>): Promise<number> {
  const rfb = await openRfb(await open());
  const started = performance.now();
  let bytes = 0;
  for (let i = 0; i < FRAMES; i += 1) {
    rfb.request(false);
    bytes += (await rfb.nextUpdate()).bytes;
  }
  const seconds = (performance.now() - started) / 1000;
  rfb.close();
  return bytes / 1024 / 1024 / seconds;
}

/** Non-empty incremental updates per second over `seconds`, one request always outstanding. */
async function updatesPerSecond(open: () => Promise<Stream>): Promise<number> {
  const rfb = await openRfb(await open());
  rfb.request(false);
  await rfb.nextUpdate();
  let updates = 0;
  const started = performance.now();
  while (performance.now() - started < FRAME_RATE_SECONDS * 1000) {
    rfb.request(true);
    const update = await Promise.race([rfb.nextUpdate(), sleep(5_000).then(() => undefined)]);
    if (!update) throw new Error("the animated page sent no update within 5 s");
    if (update.rects > 0) updates += 1;
  }
  const rate = updates / ((performance.now() - started) / 1000);
  rfb.close();
  return rate;
}

/** Waits until no update arrives for `quietMs`, keeping one incremental request outstanding. */
async function settle(rfb: RfbSession, quietMs: number): Promise<void> {
  for (;;) {
    rfb.request(true);
    const next = rfb.nextUpdate();
    const quiet = await Promise.race([next.then(() => false), sleep(quietMs).then(() => true)]);
    if (quiet) {
      // The request stays outstanding; its update is the one the next key causes.
      pendingUpdate.set(rfb, next);
      return;
    }
  }
}
const pendingUpdate = new WeakMap<RfbSession, Promise<unknown>>();

/** One key (down + up) → the first non-empty update after it, ms. */
async function keyToPixel(rfb: RfbSession, keysym: number): Promise<number> {
  await settle(rfb, 150);
  const started = performance.now();
  rfb.key(keysym, true);
  rfb.key(keysym, false);
  let next = pendingUpdate.get(rfb) as Promise<{ rects: number }>;
  for (;;) {
    const update = await Promise.race([next, sleep(5_000).then(() => undefined)]);
    if (!update) throw new Error("no framebuffer update within 5 s of a key");
    if (update.rects > 0) return performance.now() - started;
    rfb.request(true);
    next = rfb.nextUpdate();
  }
}

function capability(keyring: ScreenKeyring, policy: "view" | "control"): string {
  return mintScreenCapability(keyring, {
    computerId: BENCH_COMPUTER,
    botId: BENCH_BOT,
    slot: 0,
    generation: 1,
    policy,
    subject: "usr_bench",
    ttlMs: 600_000,
  }).token;
}

interface ScreenPath {
  readonly straight: () => Promise<Stream>;
  readonly proxied: (policy: "view" | "control") => () => Promise<Stream>;
}

/** A desktop showing `page` behind gateway + web service, each its own process, until `use` ends. */
async function withScreenPath(
  display: number,
  page: "green" | "animated",
  use: (path: ScreenPath) => Promise<void>,
): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "rkz-bench-path-"));
  const keys = generateScreenKeys("k1");
  const keyring = parseScreenKeys(keys);
  const env = { ...process.env, SCREEN_KEYS: keys };
  const peers: ChildProcess[] = [];
  try {
    const supervisor = await startPeer(["supervisor", dir, String(display), page], env);
    peers.push(supervisor.child);
    const web = await startPeer(["web", dir], env);
    peers.push(web.child);
    const { port } = new URL(web.ready.url ?? "");
    const vncSocket = supervisor.ready.vncSocket ?? "";
    await use({
      straight: () => direct(vncSocket),
      proxied: (policy) => () =>
        viaWebSocketRaw({
          host: "127.0.0.1",
          port: Number(port),
          path: `/screens/${capability(keyring, policy)}/websockify`,
        }),
    });
  } finally {
    for (const peer of peers.reverse()) {
      const exited = new Promise((r) => peer.once("exit", r));
      peer.kill("SIGTERM");
      await Promise.race([exited, sleep(15_000)]);
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function benchScreenPath(report: BenchReport): Promise<void> {
  const missing = missingTools();
  if (missing) {
    process.stdout.write(`(screen path left out: ${missing})\n`);
    return;
  }
  await withScreenPath(DISPLAY, "green", async ({ straight, proxied }) => {
    // Warm up both paths once, then alternate (medians).
    await fullFrames(straight);
    await fullFrames(proxied("view"));
    const directMbps: number[] = [];
    const proxyMbps: number[] = [];
    for (let i = 0; i < THROUGHPUT_ROUNDS; i += 1) {
      directMbps.push(await fullFrames(straight));
      proxyMbps.push(await fullFrames(proxied("view")));
    }
    const d = median(directMbps);
    const p = median(proxyMbps);
    report({
      name: "x11vnc full-frame raw updates, web proxy + gateway (view)",
      value: p,
      unit: "MiB/s",
      baseline: d,
      ratio: p / d,
      target: "≥ 0.95× direct",
    });

    const viaProxy = await openRfb(await proxied("control")());
    const viaSocket = await openRfb(await straight());
    const proxyMs: number[] = [];
    const directMs: number[] = [];
    for (let i = 0; i < LATENCY_ROUNDS; i += 1) {
      // 'a' then BackSpace in every round, so every key changes the field and it never fills
      // up; which session types first alternates. (Sending BackSpace first to an empty field
      // changed nothing, so that sample waited for an update that never came.)
      if (i % 2 === 0) {
        proxyMs.push(await keyToPixel(viaProxy, KEYSYM_A));
        directMs.push(await keyToPixel(viaSocket, KEYSYM_BACKSPACE));
      } else {
        directMs.push(await keyToPixel(viaSocket, KEYSYM_A));
        proxyMs.push(await keyToPixel(viaProxy, KEYSYM_BACKSPACE));
      }
    }
    viaProxy.close();
    viaSocket.close();
    const lp = median(proxyMs);
    const ld = median(directMs);
    report({
      name: "input-to-pixel latency p50, web proxy + gateway (control)",
      value: lp,
      unit: "ms",
      baseline: ld,
      ratio: lp / ld,
      target: "≤ 1.05× direct",
    });
  });

  await withScreenPath(DISPLAY + 1, "animated", async ({ straight, proxied }) => {
    await updatesPerSecond(straight);
    const directRates: number[] = [];
    const proxyRates: number[] = [];
    for (let i = 0; i < FRAME_RATE_ROUNDS; i += 1) {
      // Which path goes first alternates, as the page's own rate may drift.
      if (i % 2 === 0) {
        proxyRates.push(await updatesPerSecond(proxied("view")));
        directRates.push(await updatesPerSecond(straight));
      } else {
        directRates.push(await updatesPerSecond(straight));
        proxyRates.push(await updatesPerSecond(proxied("view")));
      }
    }
    const d = median(directRates);
    const p = median(proxyRates);
    report({
      name: "frame rate while a page animates, web proxy + gateway (view)",
      value: p,
      unit: "updates/s",
      baseline: d,
      ratio: p / d,
      target: "≥ 0.95× direct",
    });
  });
}
