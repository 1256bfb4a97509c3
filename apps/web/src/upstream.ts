/**
 * Reaching a computer's gateway from the web service: a Unix socket (Docker's bind-mounted run
 * dir) or HTTP(S) with provider headers (remote providers' port hosting). The ticket goes in a
 * header, never in a URL.
 */
import http from "node:http";
import https from "node:https";
import { type ScreenGatewayTarget as GatewayTarget, gatewayUrl, TICKET_HEADER } from "@rakazo/protocol";
import WebSocket from "ws";

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

/** A websocket to the gateway's RFB bridge (`/v1/rfb`) or PTY server (`/v1/pty`), not yet open. */
export function gatewaySocket(target: GatewayTarget, ticket: string, route = "/v1/rfb"): WebSocket {
  const headers = { ...(target.transport === "http" ? target.headers : {}), [TICKET_HEADER]: ticket };
  const url =
    target.transport === "unix"
      ? `ws+unix://${target.socketPath}:${route}`
      : gatewayUrl(target.url.replace(/^http/, "ws"), route).href;
  return new WebSocket(url, { headers, perMessageDeflate: false, handshakeTimeout: 10_000 });
}
