/**
 * Reaching a computer's gateway from the web service: a Unix socket (Docker's bind-mounted run
 * dir) or HTTP(S) with provider headers (remote providers' port hosting). The ticket goes in a
 * header, never in a URL.
 */
import http from "node:http";
import https from "node:https";
import type { Duplex } from "node:stream";
import { type ScreenGatewayTarget as GatewayTarget, gatewayUrl, TICKET_HEADER } from "@rakazo/protocol";
import { type BlockReads, dialRaw } from "./gateway-dial.ts";
import { acceptValue, newWebSocketKey } from "./ws-scan.ts";

/** `GET /v1/screen` on the gateway: its HTTP status (200 when the ticket would be served). */
export function gatewayStatus(target: GatewayTarget, ticket: string, timeoutMs = 5000): Promise<number> {
  return new Promise((resolve, reject) => {
    const headers = { ...(target.transport === "http" ? target.headers : {}), [TICKET_HEADER]: ticket };
    const options: http.RequestOptions =
      target.transport === "unix"
        ? { socketPath: target.socketPath, path: "/v1/screen", headers }
        : { headers };
    const url = target.transport === "http" ? gatewayUrl(target.url, "/v1/screen") : undefined;
    const request = url
      ? (url.protocol === "https:" ? https : http).request(url, {
          ...options,
          timeout: timeoutMs,
          agent: false,
        })
      : http.request({ ...options, timeout: timeoutMs, agent: false });
    request.on("response", (response) => {
      response.resume();
      resolve(response.statusCode ?? 502);
    });
    request.on("timeout", () => request.destroy(new Error("gateway timed out")));
    request.on("error", reject);
    request.end();
  });
}

export type GatewayDial =
  | {
      readonly ok: true;
      readonly socket: Duplex;
      /** Set on a plain socket reading into one buffer (gateway-dial.ts); else `head` holds early bytes. */
      readonly reads?: BlockReads;
      readonly head?: Buffer;
    }
  | { readonly ok: false; readonly status: number; readonly error?: string };

/**
 * Opens a websocket to the gateway's RFB bridge (`/v1/rfb`) or PTY server (`/v1/pty`) and
 * hands back the raw socket once the gateway answered 101 with the right accept value: the
 * proxy relays its bytes as they are (proxy.ts). `status` is the gateway's refusal (0: none
 * arrived). `abort` drops a dial still under way. Unix and `http:` targets are dialed by hand
 * (gateway-dial.ts) to read into one buffer; `https:` goes through `https.request`.
 */
export function dialGateway(
  target: GatewayTarget,
  ticket: string,
  route = "/v1/rfb",
  timeoutMs = 10_000,
): { readonly result: Promise<GatewayDial>; abort(): void } {
  const ticketHeaders = { ...(target.transport === "http" ? target.headers : {}), [TICKET_HEADER]: ticket };
  if (target.transport === "unix")
    return dialRaw(
      { path: target.socketPath },
      { path: route, host: "localhost", headers: ticketHeaders },
      timeoutMs,
    );
  const plain = gatewayUrl(target.url, route);
  if (plain.protocol === "http:")
    return dialRaw(
      { host: plain.hostname.replace(/^\[|\]$/g, ""), port: Number(plain.port || 80) },
      { path: `${plain.pathname}${plain.search}`, host: plain.host, headers: ticketHeaders },
      timeoutMs,
    );
  const key = newWebSocketKey();
  const headers = {
    ...ticketHeaders,
    connection: "Upgrade",
    upgrade: "websocket",
    "sec-websocket-version": "13",
    "sec-websocket-key": key,
  };
  const request = https.request(plain, { headers, timeout: timeoutMs, agent: false });
  const result = new Promise<GatewayDial>((resolve) => {
    request.on("upgrade", (response, socket, head) => {
      socket.setTimeout(0);
      if (response.statusCode !== 101 || response.headers["sec-websocket-accept"] !== acceptValue(key)) {
        socket.destroy();
        resolve({ ok: false, status: 502, error: "bad_handshake" });
        return;
      }
      resolve({ ok: true, socket, head });
    });
    request.on("response", (response) => {
      response.resume();
      resolve({ ok: false, status: response.statusCode ?? 502 });
    });
    request.on("timeout", () =>
      request.destroy(Object.assign(new Error("gateway timed out"), { code: "ETIMEDOUT" })),
    );
    request.on("error", (error: NodeJS.ErrnoException) =>
      resolve({ ok: false, status: 0, error: error.code ?? "error" }),
    );
  });
  request.end();
  return { result, abort: () => request.destroy() };
}
