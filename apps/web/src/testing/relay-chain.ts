/**
 * gateway ⇄ proxy ⇄ browser on loopback for the relay's tests: a `ws` server as the gateway, a
 * `ws` client as the browser, and between them the proxy's own `dialGateway` + `relayBytes`,
 * wired as proxy.ts wires them (minus the authority).
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import WebSocket, { WebSocketServer } from "ws";
import { relayBytes } from "../relay.ts";
import { dialGateway } from "../upstream.ts";
import { acceptValue } from "../ws-scan.ts";

const closers: (() => void)[] = [];

export function closeRelayChains(): void {
  for (const close of closers.splice(0)) close();
}

export interface Chain {
  readonly gateway: WebSocket;
  readonly browser: WebSocket;
  /** The proxy's two sockets. */
  readonly browserSide: Duplex;
  readonly upstream: Duplex;
  readonly closed: Promise<{ closedBy: string; code: number }>;
}

export async function relayChain(): Promise<Chain> {
  const gatewayServer = new WebSocketServer({ host: "127.0.0.1", port: 0, perMessageDeflate: false });
  await new Promise((r) => gatewayServer.once("listening", r));
  const gatewayReady = new Promise<WebSocket>((r) => gatewayServer.once("connection", r));
  const url = `http://127.0.0.1:${(gatewayServer.address() as AddressInfo).port}`;
  let proxied: ((value: Omit<Chain, "gateway" | "browser">) => void) | undefined;
  const proxyReady = new Promise<Omit<Chain, "gateway" | "browser">>((r) => {
    proxied = r;
  });
  const proxy = http.createServer();
  proxy.on("upgrade", async (request, browserSide: Duplex) => {
    const dialed = await dialGateway({ transport: "http", url }, "ticket").result;
    if (!dialed.ok) throw new Error(`dial failed: ${dialed.status}`);
    browserSide.write(
      "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
        `Sec-WebSocket-Accept: ${acceptValue(String(request.headers["sec-websocket-key"]))}\r\n\r\n`,
    );
    let closedHook: (value: { closedBy: string; code: number }) => void = () => undefined;
    const closed = new Promise<{ closedBy: string; code: number }>((r) => {
      closedHook = r;
    });
    const stop = relayBytes(
      browserSide,
      dialed.socket,
      {
        closed: (closedBy, code) => closedHook({ closedBy, code }),
        error: () => undefined,
      },
      dialed.reads,
    );
    closers.push(stop);
    proxied?.({ browserSide, upstream: dialed.socket, closed });
  });
  await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
  closers.push(() => {
    proxy.close();
    for (const client of gatewayServer.clients) client.terminate();
    gatewayServer.close();
  });
  const browser = new WebSocket(`ws://127.0.0.1:${(proxy.address() as AddressInfo).port}`, {
    perMessageDeflate: false,
  });
  closers.push(() => browser.terminate());
  await new Promise<void>((resolve, reject) => {
    browser.once("open", () => resolve());
    browser.once("error", reject);
  });
  return { gateway: await gatewayReady, browser, ...(await proxyReady) };
}

export const until = async (check: () => boolean, ms = 10_000): Promise<void> => {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 20));
  }
};
