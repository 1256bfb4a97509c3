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
import net from "node:net";
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

export interface BenchRow {
  readonly name: string;
  readonly value: number;
  readonly unit: string;
  readonly baseline?: number;
  readonly ratio?: number;
  readonly target?: string;
}

const HANDSHAKE = Buffer.concat([Buffer.from("RFB 003.008\n"), Buffer.from([1, 1])]);
const SERVER_HANDSHAKE = 12 + 2 + 4 + 24 + 4;
const ROUNDS = 2000;

function startPeer(mode: string, dir: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [fileURLToPath(new URL("./peer.ts", import.meta.url)), mode, dir], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    child.stdout?.once("data", () => resolve(child));
    child.once("exit", (code) => reject(new Error(`${mode} peer exited ${code}`)));
  });
}

/** One byte stream, direct or through the gateway. */
interface Stream {
  send(bytes: Buffer): void;
  onData(listener: (chunk: Buffer) => void): void;
  close(): void;
}

function direct(socketPath: string): Promise<Stream> {
  return new Promise((resolve) => {
    const socket = net.connect(socketPath, () => {
      socket.setNoDelay(true);
      resolve({
        send: (b) => socket.write(b),
        onData: (l) => socket.on("data", l),
        close: () => socket.destroy(),
      });
    });
  });
}

/**
 * A minimal websocket client on a raw socket: handshake, masked binary frames out, and server
 * frames walked header by header with their payloads handed on as views of the read chunks.
 */
function viaGatewayRaw(gatewaySocket: string, ticket: string): Promise<Stream> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(gatewaySocket);
    socket.once("error", reject);
    socket.once("connect", () => {
      socket.setNoDelay(true);
      socket.write(
        "GET /v1/rfb HTTP/1.1\r\nHost: gateway\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
          `Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ${randomBytes(16).toString("base64")}\r\n` +
          `x-rakazo-screen-ticket: ${ticket}\r\n\r\n`,
      );
    });
    let head: Buffer | undefined = Buffer.alloc(0);
    let pending = Buffer.alloc(0); // an incomplete frame header
    let remaining = 0; // payload bytes left in the current frame
    const early: Buffer[] = [];
    let listener: ((chunk: Buffer) => void) | undefined;
    const emit = (bytes: Buffer) => (listener ? listener(bytes) : early.push(Buffer.from(bytes)));
    const frames = (chunk: Buffer): void => {
      let at = 0;
      while (at < chunk.length) {
        if (remaining > 0) {
          const n = Math.min(remaining, chunk.length - at);
          emit(chunk.subarray(at, at + n));
          remaining -= n;
          at += n;
          continue;
        }
        const take = Math.min(10 - pending.length, chunk.length - at);
        const header =
          pending.length > 0 ? Buffer.concat([pending, chunk.subarray(at, at + take)]) : chunk.subarray(at);
        const before = pending.length;
        if (header.length < 2) {
          pending = Buffer.from(header);
          return;
        }
        const len7 = (header[1] as number) & 0x7f;
        const size = len7 === 126 ? 4 : len7 === 127 ? 10 : 2;
        if (header.length < size) {
          pending = Buffer.from(header.subarray(0, Math.min(header.length, 10)));
          return;
        }
        if (((header[0] as number) & 0x0f) >= 8) throw new Error("unexpected control frame in bench");
        remaining =
          len7 === 126 ? header.readUInt16BE(2) : len7 === 127 ? Number(header.readBigUInt64BE(2)) : len7;
        at += size - before;
        pending = Buffer.alloc(0);
      }
    };
    socket.on("data", (chunk: Buffer) => {
      if (!head) return frames(chunk);
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf("\r\n\r\n");
      if (end < 0) return;
      if (!head.subarray(0, 13).equals(Buffer.from("HTTP/1.1 101 "))) {
        reject(new Error(`gateway refused: ${head.subarray(0, end).toString("latin1").split("\r\n")[0]}`));
        socket.destroy();
        return;
      }
      const rest = head.subarray(end + 4);
      head = undefined;
      resolve({
        send: (bytes) => {
          const mask = randomBytes(4);
          const frame = Buffer.alloc(6 + bytes.length);
          frame[0] = 0x82;
          frame[1] = 0x80 | bytes.length; // bench messages are < 126 bytes
          mask.copy(frame, 2);
          for (let i = 0; i < bytes.length; i += 1)
            frame[6 + i] = (bytes[i] as number) ^ (mask[i & 3] as number);
          socket.write(frame);
        },
        onData: (l) => {
          listener = l;
          for (const chunk of early.splice(0)) l(chunk);
        },
        close: () => socket.destroy(),
      });
      if (rest.length > 0) frames(rest);
    });
  });
}

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

export async function benchGateway(report: (row: BenchRow) => void): Promise<void> {
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
