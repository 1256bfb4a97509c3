/**
 * How the byte relay ends and what it refuses: close frames pass through with their codes (the
 * gateway's revocation close is what the proxy logs as `revoked`), a gateway that vanishes
 * without a close frame still gets the browser a clean close, and a browser frame over the cap
 * is refused in the proxy before a byte of it reaches the gateway. Plus the frame scanner on
 * frames cut at every byte.
 */
import { afterEach, describe, expect, it } from "vitest";
import type WebSocket from "ws";
import { MAX_BROWSER_FRAME } from "./relay.ts";
import { closeRelayChains, relayChain } from "./testing/relay-chain.ts";
import { FrameScanner } from "./ws-scan.ts";

afterEach(closeRelayChains);

const closeOf = (ws: WebSocket) =>
  new Promise<number>((resolve) => ws.once("close", (code: number) => resolve(code)));

describe("relay endings", () => {
  it("the gateway's revocation close (4001) reaches the browser and is reported as revoked", async () => {
    const { gateway, browser, closed } = await relayChain();
    const code = closeOf(browser);
    gateway.close(4001, "revoked");
    expect(await code).toBe(4001);
    expect(await closed).toEqual({ closedBy: "revoked", code: 4001 });
  });

  it("the browser's close reaches the gateway", async () => {
    const { gateway, browser, closed } = await relayChain();
    const code = closeOf(gateway);
    browser.close(4100);
    expect(await code).toBe(4100);
    expect(await closed).toEqual({ closedBy: "client", code: 4100 });
  });

  it("a gateway gone without a close frame still closes the browser cleanly", async () => {
    const { gateway, browser, closed } = await relayChain();
    const code = closeOf(browser);
    gateway.terminate();
    expect(await code).toBe(1000);
    expect(await closed).toEqual({ closedBy: "upstream", code: 1006 });
  });

  it("a browser frame over the cap is refused (1009) and never reaches the gateway", async () => {
    const { gateway, browser, closed } = await relayChain();
    let received = 0;
    gateway.on("message", (data: Buffer) => {
      received += data.length;
    });
    const gatewayClosed = closeOf(gateway);
    const code = closeOf(browser);
    browser.send(Buffer.alloc(8));
    browser.send(Buffer.alloc(MAX_BROWSER_FRAME + 1));
    expect(await code).toBe(1009);
    await gatewayClosed;
    expect(received).toBeLessThanOrEqual(8);
    expect(await closed).toEqual({ closedBy: "client", code: 1009 });
  }, 20_000);
});

describe("FrameScanner", () => {
  const masked = (payload: Buffer, opcode: number) => {
    const mask = Buffer.from([0x12, 0x34, 0x56, 0x78]);
    const body = Buffer.from(payload.map((b, i) => b ^ (mask[i % 4] as number)));
    const length = payload.length;
    const head =
      length < 126
        ? Buffer.from([0x80 | opcode, 0x80 | length])
        : Buffer.from([0x80 | opcode, 0x80 | 126, length >> 8, length & 0xff]);
    return Buffer.concat([head, mask, body]);
  };

  it("finds boundaries and a masked close code in a stream cut at every byte", () => {
    const close = Buffer.from([0x0f, 0xa1, 0x62, 0x79, 0x65]); // 4001 "bye"
    const stream = Buffer.concat([masked(Buffer.alloc(300, 7), 2), masked(close, 8)]);
    const scanner = new FrameScanner(1024);
    const boundaries: number[] = [];
    for (let i = 0; i < stream.length; i += 1) {
      expect(scanner.push(stream.subarray(i, i + 1))).toBe(true);
      if (scanner.atBoundary) boundaries.push(i + 1);
    }
    expect(boundaries).toEqual([2 + 2 + 4 + 300, stream.length]);
    expect(scanner.closeCode).toBe(4001);
  });

  it("refuses a frame whose 64-bit length is over the cap", () => {
    const header = Buffer.from([0x82, 0x80 | 127, 0, 0, 0, 1, 0, 0, 0, 0, 1, 2, 3, 4]);
    const scanner = new FrameScanner(16 * 1024 * 1024);
    expect(scanner.push(header)).toBe(false);
  });
});
