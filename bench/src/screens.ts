/**
 * `pnpm bench --only screens`: the screen gateway against a direct connection to the same RFB
 * Unix socket, in the same run. Gateway, RFB servers and client run in separate processes.
 * - throughput: 256 MiB of server→client RFB data (what a screen is), direct vs through the
 *   gateway's websocket (ratio = gateway ÷ direct; target ≥ 0.9×). Both sides are read by an
 *   equally thin client — a plain socket reader; for the gateway it also walks the websocket
 *   frame headers, zero-copy — so the ratio is the gateway's cost, not a websocket library's.
 *   A second row reads the gateway with `ws` (what the web proxy uses), for reference;
 * - added latency: p50 of a 10-byte client message echoed by the server, gateway − direct
 *   (target < 1 ms), for control (passed through) and view (parsed by the RFB filter).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import {
  deriveScreenKey,
  newCapabilityId,
  type ScreenPolicy,
  sealCapability,
} from "@rakazo/protocol/capability";
import WebSocket from "ws";
import { BLAST_BYTES } from "./constants.ts";
import { direct, type Stream, viaWebSocketRaw } from "./rfb-stream.ts";
import type { BenchReport } from "./row.ts";

const HANDSHAKE = Buffer.concat([Buffer.from("RFB 003.008\n"), Buffer.from([1, 1])]);
const SERVER_HANDSHAKE = 12 + 2 + 4 + 24 + 4;
const ROUNDS = 2000;

function startPeer(mode: string, dir: string): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [fileURLToPath(new URL("./screens-peer.ts", import.meta.url)), mode, dir],
    {
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  return new Promise((resolve, reject) => {
    child.stdout?.once("data", () => resolve(child));
    child.once("exit", (code) => reject(new Error(`${mode} peer exited ${code}`)));
  });
}

/** The gateway's RFB route read by the raw websocket client (rfb-stream.ts). */
const viaGatewayRaw = (gatewaySocket: string, ticket: string): Promise<Stream> =>
  viaWebSocketRaw({
    socketPath: gatewaySocket,
    path: "/v1/rfb",
    headers: { "x-rakazo-screen-ticket": ticket },
  });

/** The gateway through the `ws` client, as the web proxy reaches it. */
function viaGateway(gatewaySocket: string, ticket: string): Promise<Stream> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws+unix://${gatewaySocket}:/v1/rfb`, {
      headers: { "x-rakazo-screen-ticket": ticket },
      perMessageDeflate: false,
    });
    ws.binaryType = "nodebuffer";
    const early: Buffer[] = [];
    let listener: ((chunk: Buffer) => void) | undefined;
    ws.on("message", (data: Buffer) => (listener ? listener(data) : early.push(data)));
    ws.once("error", reject);
    ws.once("open", () =>
      resolve({
        send: (b) => ws.send(b),
        onData: (l) => {
          listener = l;
          for (const chunk of early.splice(0)) l(chunk);
        },
        onClose: (l) => ws.once("close", () => l()),
        close: () => ws.terminate(),
      }),
    );
  });
}

async function throughput(open: () => Promise<Stream>): Promise<number> {
  const stream = await open();
  const started = performance.now();
  let got = 0;
  await new Promise<void>((resolve) => {
    stream.onData((chunk) => {
      got += chunk.length;
      if (got >= SERVER_HANDSHAKE + BLAST_BYTES) resolve();
    });
    stream.send(HANDSHAKE);
  });
  const seconds = (performance.now() - started) / 1000;
  stream.close();
  return BLAST_BYTES / 1024 / 1024 / seconds;
}

async function latencyP50(open: () => Promise<Stream>): Promise<number> {
  const stream = await open();
  let got = 0;
  let waiting: (() => void) | undefined;
  let need = SERVER_HANDSHAKE;
  stream.onData((chunk) => {
    got += chunk.length;
    if (got >= need && waiting) {
      const done = waiting;
      waiting = undefined;
      done();
    }
  });
  const until = (n: number) =>
    new Promise<void>((resolve) => {
      need = n;
      if (got >= n) resolve();
      else waiting = resolve;
    });
  stream.send(HANDSHAKE);
  await until(SERVER_HANDSHAKE);
  // FramebufferUpdateRequest: allowed for view, so both policies echo the same bytes.
  const message = Buffer.from([3, 1, 0, 0, 0, 0, 0, 64, 0, 48]);
  const samples: number[] = [];
  for (let i = 0; i < ROUNDS; i += 1) {
    const t0 = performance.now();
    stream.send(message);
    await until(got + message.length);
    samples.push(performance.now() - t0);
  }
  stream.close();
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)] as number;
}

export async function benchGateway(report: BenchReport): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "rkz-bench-gw-"));
  const master = randomBytes(32);
  const key = deriveScreenKey(master, "gateway", "cmp_bench");
  writeFileSync(
    path.join(dir, "bench-keys.json"),
    JSON.stringify({ computerId: "cmp_bench", keys: [{ kid: "k1", key: key.toString("base64") }] }),
  );
  const ticket = (slot: number, policy: ScreenPolicy) => {
    const now = Date.now();
    return sealCapability(key, "k1", "gateway", {
      id: newCapabilityId(),
      computerId: "cmp_bench",
      botId: "bot",
      slot,
      generation: 1,
      policy,
      subject: "",
      issuedAt: now,
      expiresAt: now + 600_000,
    });
  };
  const peers = [await startPeer("rfb", dir), await startPeer("gateway", dir)];
  const gatewaySocket = path.join(dir, "gateway.sock");
  try {
    // Warm up every path once, then measure alternately (medians of 5).
    await throughput(() => direct(path.join(dir, "blast.sock")));
    await throughput(() => viaGatewayRaw(gatewaySocket, ticket(0, "control")));
    await throughput(() => viaGateway(gatewaySocket, ticket(0, "control")));
    const directMbps: number[] = [];
    const gatewayMbps: number[] = [];
    const wsMbps: number[] = [];
    for (let i = 0; i < 5; i += 1) {
      directMbps.push(await throughput(() => direct(path.join(dir, "blast.sock"))));
      gatewayMbps.push(await throughput(() => viaGatewayRaw(gatewaySocket, ticket(0, "view"))));
      wsMbps.push(await throughput(() => viaGateway(gatewaySocket, ticket(0, "view"))));
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
    const d = median(directMbps);
    const g = median(gatewayMbps);
    const w = median(wsMbps);
    report({
      name: "gateway throughput (server→client, view)",
      value: g,
      unit: "MiB/s",
      baseline: d,
      ratio: g / d,
      target: "≥ 0.9× direct",
    });
    report({
      name: "gateway throughput, read by the ws client",
      value: w,
      unit: "MiB/s",
      baseline: d,
      ratio: w / d,
    });

    const directP50 = await latencyP50(() => direct(path.join(dir, "echo.sock")));
    for (const policy of ["control", "view"] as const) {
      const p50 = await latencyP50(() => viaGatewayRaw(gatewaySocket, ticket(1, policy)));
      report({
        name: `gateway round trip p50 (${policy})`,
        value: p50,
        unit: "ms",
        baseline: directP50,
        ratio: p50 / directP50,
      });
      report({
        name: `gateway added latency p50 (${policy})`,
        value: p50 - directP50,
        unit: "ms",
        target: "< 1 ms",
      });
    }
  } finally {
    for (const peer of peers) peer.kill("SIGTERM");
    rmSync(dir, { recursive: true, force: true });
  }
}
