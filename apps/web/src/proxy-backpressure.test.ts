/**
 * Backpressure through the web proxy in both directions: when one side
 * stops reading, the proxy stops reading the other side instead of buffering without bound, and
 * everything arrives intact once reading resumes. Real `ws` sockets on loopback.
 */
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import WebSocket, { WebSocketServer } from "ws";
import { forward, HIGH_WATER } from "./proxy.ts";

const MESSAGE = 1024 * 1024;
const COUNT = 48; // 48 MiB: far more than the high-water mark plus kernel socket buffers
const servers: WebSocketServer[] = [];
const sockets: WebSocket[] = [];

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.terminate();
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

async function listen(onConnection: (ws: WebSocket) => void): Promise<number> {
  const server = new WebSocketServer({ host: "127.0.0.1", port: 0, perMessageDeflate: false });
  servers.push(server);
  server.on("connection", (ws) => {
    sockets.push(ws);
    onConnection(ws);
  });
  await new Promise((r) => server.once("listening", r));
  return (server.address() as AddressInfo).port;
}

const open = (ws: WebSocket) =>
  new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
const until = async (check: () => boolean, ms = 10_000): Promise<void> => {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 20));
  }
};

/** gateway ⇄ proxy (forward both ways) ⇄ browser; returns the four ends. */
async function chain() {
  let gateway: WebSocket | undefined;
  const gatewayPort = await listen((ws) => {
    gateway = ws;
  });
  let proxied: { browserSide: WebSocket; upstream: WebSocket } | undefined;
  const proxyPort = await listen((browserSide) => {
    const upstream = new WebSocket(`ws://127.0.0.1:${gatewayPort}`, { perMessageDeflate: false });
    sockets.push(upstream);
    upstream.once("open", () => {
      forward(upstream, browserSide);
      forward(browserSide, upstream);
      proxied = { browserSide, upstream };
    });
  });
  const browser = new WebSocket(`ws://127.0.0.1:${proxyPort}`, { perMessageDeflate: false });
  sockets.push(browser);
  await open(browser);
  await until(() => proxied !== undefined && gateway !== undefined);
  return { gateway: gateway as WebSocket, browser, ...(proxied as NonNullable<typeof proxied>) };
}

/** Counts received bytes and checks each message's sequence byte. */
function receiver(ws: WebSocket) {
  const state = { bytes: 0, next: 0, inOrder: true };
  ws.on("message", (data: Buffer) => {
    state.bytes += data.length;
    if (data[0] !== state.next % 256) state.inOrder = false;
    state.next += 1;
  });
  return state;
}

const message = (i: number) => Buffer.alloc(MESSAGE, i % 256);

describe("proxy backpressure", () => {
  it("a browser that stops reading pauses reading from the gateway", async () => {
    const { gateway, browser, browserSide, upstream } = await chain();
    browser.pause();
    const got = receiver(browser);
    for (let i = 0; i < COUNT; i += 1) gateway.send(message(i));
    await until(() => upstream.isPaused);
    await new Promise((r) => setTimeout(r, 500));
    // The proxy holds at most the high-water mark plus the message that crossed it...
    expect(browserSide.bufferedAmount).toBeLessThanOrEqual(HIGH_WATER + MESSAGE);
    // ...and the rest waits at the gateway, which is where it belongs.
    expect(gateway.bufferedAmount).toBeGreaterThan(8 * MESSAGE);
    browser.resume();
    await until(() => got.bytes === COUNT * MESSAGE);
    expect(got.inOrder).toBe(true);
  }, 30_000);

  it("a gateway that stops reading pauses reading from the browser", async () => {
    const { gateway, browser, browserSide, upstream } = await chain();
    gateway.pause();
    const got = receiver(gateway);
    for (let i = 0; i < COUNT; i += 1) browser.send(message(i));
    await until(() => browserSide.isPaused);
    await new Promise((r) => setTimeout(r, 500));
    expect(upstream.bufferedAmount).toBeLessThanOrEqual(HIGH_WATER + MESSAGE);
    expect(browser.bufferedAmount).toBeGreaterThan(8 * MESSAGE);
    gateway.resume();
    await until(() => got.bytes === COUNT * MESSAGE);
    expect(got.inOrder).toBe(true);
  }, 30_000);
});
