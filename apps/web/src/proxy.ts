/**
 * The screen proxy's websocket half (SCR-5): browser ⇄ web service ⇄ computer gateway.
 * The upstream handshake completes before the browser's upgrade is accepted, so a refused
 * ticket is an HTTP error to the browser, not an open-then-closed socket. Every event carries a
 * random `screen.connection_id` and the policy; nothing secret is logged (no path, headers,
 * ticket or target).
 */
import { randomBytes } from "node:crypto";
import type http from "node:http";
import type { Duplex } from "node:stream";
import type { Logger } from "@rakazo/log";
import { CLOSE_REVOKED, TERMINAL_GATEWAY_PATH } from "@rakazo/protocol";
import WebSocket, { WebSocketServer } from "ws";
import type { ScreenAuthority } from "./authority.ts";
import { gatewaySocket } from "./upstream.ts";

export const HIGH_WATER = 4 * 1024 * 1024;
const LOW_WATER = 1024 * 1024;
/**
 * `/screens/<cap>/websockify` bridges to the gateway's RFB route and takes `view`/`control`
 * capabilities only; `/terminals/<cap>/pty` bridges to its PTY server (TRM-4) and takes
 * `terminal` capabilities only. A capability on the other route is refused (`wrong_policy`).
 */
const CAPABILITY_PATH =
  /^\/(screens|terminals)\/(rs1\.[A-Za-z0-9_-]{1,32}\.[A-Za-z0-9_-]{20,2000})\/(websockify|pty)$/;

function routeFor(match: RegExpExecArray | null): { capability: string; terminal: boolean } | undefined {
  if (!match?.[2]) return undefined;
  if (match[1] === "screens" && match[3] === "websockify") return { capability: match[2], terminal: false };
  if (match[1] === "terminals" && match[3] === "pty") return { capability: match[2], terminal: true };
  return undefined;
}

export function newConnectionId(): string {
  return randomBytes(8).toString("hex");
}

function refuse(socket: Duplex, status: number): void {
  const reason =
    status === 404 ? "Not Found" : status === 403 ? "Forbidden" : status === 410 ? "Gone" : "Bad Gateway";
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\ncache-control: no-store, no-transform\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`,
  );
}

/** Sendable close code for a code received (1005/1006/1015 cannot be sent). */
function relayCode(code: number): number {
  return code === 1000 ||
    (code >= 1001 && code <= 1014 && code !== 1005 && code !== 1006) ||
    (code >= 3000 && code < 5000)
    ? code
    : 1000;
}

export function attachScreenProxy(server: http.Server, authority: ScreenAuthority, log: Logger): () => void {
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: 16 * 1024 * 1024 });
  const live = new Set<WebSocket>();

  const onUpgrade = async (request: http.IncomingMessage, socket: Duplex, head: Buffer): Promise<void> => {
    socket.on("error", () => undefined);
    const id = newConnectionId();
    const route = routeFor(CAPABILITY_PATH.exec((request.url ?? "").split("?")[0] ?? ""));
    if (!route) {
      log.warn("screen.proxy.target_rejected", {
        "screen.connection_id": id,
        "screen.policy": null,
        "screen.reason": "invalid_path",
        "screen.transport": "websocket",
      });
      refuse(socket, 404);
      return;
    }
    const authorization = await authority.authorize(route.capability);
    if (!authorization.ok) {
      log.warn("screen.proxy.target_rejected", {
        "screen.connection_id": id,
        "screen.policy": null,
        "screen.reason": authorization.reason,
        "screen.authority_reason": authorization.detail ?? null,
        "screen.transport": "websocket",
      });
      refuse(socket, authorization.reason === "authority_rejected" ? 403 : 502);
      return;
    }
    const policy = authorization.policy;
    if ((policy === "terminal") !== route.terminal) {
      log.warn("screen.proxy.target_rejected", {
        "screen.connection_id": id,
        "screen.policy": policy,
        "screen.reason": "wrong_policy",
        "screen.transport": "websocket",
      });
      refuse(socket, 403);
      return;
    }
    const started = performance.now();
    const base = { "screen.connection_id": id, "screen.policy": policy };
    const upstream = gatewaySocket(
      authorization.target,
      authorization.ticket,
      route.terminal ? TERMINAL_GATEWAY_PATH : "/v1/rfb",
    );
    upstream.binaryType = "nodebuffer";
    let upstreamOpen = false;
    upstream.once("unexpected-response", (_req, response) => {
      response.resume();
      log.warn("screen.proxy.websocket_handshake_failed", {
        ...base,
        "screen.status": response.statusCode ?? 0,
      });
      refuse(
        socket,
        response.statusCode === 410
          ? 410
          : response.statusCode === 403 || response.statusCode === 401
            ? 403
            : 502,
      );
      upstream.terminate();
    });
    upstream.once("error", (error) => {
      if (upstreamOpen) return;
      log.warn("screen.proxy.websocket_handshake_failed", {
        ...base,
        "screen.status": 0,
        "screen.error": (error as NodeJS.ErrnoException).code ?? "error",
      });
      refuse(socket, 502);
    });
    upstream.once("open", () => {
      upstreamOpen = true;
      if (socket.destroyed) {
        upstream.close(1001);
        return;
      }
      wss.handleUpgrade(request, socket, head, (browser) => {
        live.add(browser);
        log.info("screen.proxy.websocket_upgraded", base);
        relay(
          browser,
          upstream,
          (closedBy, code) => {
            live.delete(browser);
            if (closedBy === "revoked")
              log.info("screen.proxy.revoked", { ...base, "screen.close_code": code });
            log.info("screen.proxy.websocket_closed", {
              ...base,
              "screen.upstream_handshake": true,
              "screen.duration_ms": Math.round(performance.now() - started),
              "screen.closed_by": closedBy,
              "screen.close_code": code,
            });
          },
          (side, error) => {
            log.warn("screen.proxy.websocket_error", {
              ...base,
              "screen.side": side,
              "screen.error": (error as NodeJS.ErrnoException).code ?? error.name,
            });
          },
        );
      });
    });
    // The browser gave up before the upstream answered.
    socket.once("close", () => {
      if (!upstreamOpen) {
        upstream.terminate();
        log.info("screen.proxy.websocket_closed", {
          ...base,
          "screen.upstream_handshake": false,
          "screen.duration_ms": Math.round(performance.now() - started),
          "screen.closed_by": "client",
        });
      }
    });
  };

  server.on("upgrade", (request, socket, head) => void onUpgrade(request, socket, head));
  return () => {
    for (const browser of live) browser.terminate();
    wss.close();
  };
}

type ClosedBy = "client" | "upstream" | "revoked";

/**
 * Messages from `from` to `to`, with backpressure: reading `from` pauses while `to` holds more
 * than `HIGH_WATER` unsent bytes and resumes once a send has flushed below `LOW_WATER`. Both
 * directions use it, so neither a browser that stops reading nor a gateway that stops reading
 * (a viewer's flood) makes the web service buffer without bound.
 */
export function forward(from: WebSocket, to: WebSocket): void {
  const flushed = (): void => {
    if (from.isPaused && to.bufferedAmount <= LOW_WATER) from.resume();
  };
  from.on("message", (data: Buffer) => {
    if (to.readyState !== WebSocket.OPEN) return;
    to.send(data, { binary: true }, flushed);
    if (to.bufferedAmount > HIGH_WATER && !from.isPaused) from.pause();
  });
}

function relay(
  browser: WebSocket,
  upstream: WebSocket,
  onClosed: (closedBy: ClosedBy, code: number) => void,
  onError: (side: "client" | "upstream", error: Error) => void,
): void {
  let done = false;
  const finish = (closedBy: ClosedBy, code: number): void => {
    if (done) return;
    done = true;
    onClosed(closedBy, code);
  };
  forward(upstream, browser);
  forward(browser, upstream);
  upstream.on("close", (code) => {
    const closedBy = code === CLOSE_REVOKED ? "revoked" : "upstream";
    finish(closedBy, code);
    if (browser.readyState === WebSocket.OPEN)
      browser.close(relayCode(code), closedBy === "revoked" ? "revoked" : "");
  });
  browser.on("close", (code) => {
    finish("client", code);
    if (upstream.readyState === WebSocket.OPEN) upstream.close(relayCode(code));
  });
  upstream.on("error", (error) => onError("upstream", error));
  browser.on("error", (error) => onError("client", error));
}
