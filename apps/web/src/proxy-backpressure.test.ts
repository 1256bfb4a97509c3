/**
 * Backpressure through the web proxy's byte relay in both directions: when one side stops
 * reading, the proxy stops reading the other side instead of buffering without bound, and
 * everything arrives intact once reading resumes. Real `ws` ends on loopback (a `ws` server as
 * the gateway, a `ws` client as the browser) and the proxy's own dial and relay between them.
 */
import type { Duplex } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import type WebSocket from "ws";
import { READ_SIZE } from "./gateway-dial.ts";
import { relayChain as chain, closeRelayChains, until } from "./testing/relay-chain.ts";

const MESSAGE = 1024 * 1024;
const COUNT = 48; // 48 MiB: far more than any socket buffer on either side
/** What a relay socket may hold: its high-water mark plus one read (≤ READ_SIZE). */
const HELD = 64 * 1024 + READ_SIZE;

afterEach(closeRelayChains);

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
const paused = (socket: Duplex) => socket.isPaused();

describe("proxy backpressure", () => {
  it("a browser that stops reading pauses reading from the gateway", async () => {
    const { gateway, browser, browserSide } = await chain();
    browser.pause();
    const got = receiver(browser);
    for (let i = 0; i < COUNT; i += 1) gateway.send(message(i));
    // The proxy's gateway socket reads into one buffer (gateway-dial.ts), so its reading stops
    // below the stream layer (no isPaused to wait for): what shows it is what each side holds.
    await new Promise((r) => setTimeout(r, 1000));
    // The proxy holds at most its socket's high-water mark plus the read that crossed it...
    expect(browserSide.writableLength).toBeLessThanOrEqual(HELD);
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
    await until(() => paused(browserSide));
    await new Promise((r) => setTimeout(r, 500));
    expect(upstream.writableLength).toBeLessThanOrEqual(HELD);
    expect(browser.bufferedAmount).toBeGreaterThan(8 * MESSAGE);
    gateway.resume();
    await until(() => got.bytes === COUNT * MESSAGE);
    expect(got.inOrder).toBe(true);
  }, 30_000);
});
