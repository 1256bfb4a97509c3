/**
 * The screen proxy's websocket half (SCR-5): browser ⇄ web service ⇄ computer gateway.
 * The upstream handshake completes before the browser's upgrade is accepted, so a refused
 * ticket is an HTTP error to the browser, not an open-then-closed socket. After both handshakes
 * the two sockets are relayed as bytes (relay.ts): no frame is decoded or re-framed here. Every event carries a
 * random `screen.connection_id` and the policy; nothing secret is logged (no path, headers,
 * ticket or target).
 */
import { randomBytes } from "node:crypto";
import type http from "node:http";
import type { Duplex } from "node:stream";
import type { Logger } from "@rakazo/log";
import { TERMINAL_GATEWAY_PATH } from "@rakazo/protocol";
import type { ScreenAuthority } from "./authority.ts";
import { relayBytes } from "./relay.ts";
import { dialGateway } from "./upstream.ts";
import { acceptValue, validWebSocketKey } from "./ws-scan.ts";

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
    status === 400
      ? "Bad Request"
      : status === 404
        ? "Not Found"
        : status === 403
          ? "Forbidden"
          : status === 410
            ? "Gone"
            : "Bad Gateway";
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\ncache-control: no-store, no-transform\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`,
  );
}

/** The browser's upgrade, checked as a websocket server would: the 101 to answer it, or none. */
function browserAccept(request: http.IncomingMessage): string | undefined {
  const key = request.headers["sec-websocket-key"];
  if (
    request.method !== "GET" ||
    (request.headers.upgrade ?? "").toLowerCase() !== "websocket" ||
    request.headers["sec-websocket-version"] !== "13" ||
    !validWebSocketKey(key)
  )
    return undefined;
  // Like `ws` without `handleProtocols`: the first subprotocol offered, if it is a token.
  const offered = (request.headers["sec-websocket-protocol"] ?? "").split(",")[0]?.trim() ?? "";
  const protocol = PROTOCOL_TOKEN.test(offered) ? `Sec-WebSocket-Protocol: ${offered}\r\n` : "";
  return (
    "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
    `Sec-WebSocket-Accept: ${acceptValue(key)}\r\n${protocol}\r\n`
  );
}
const PROTOCOL_TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$/;

export function attachScreenProxy(server: http.Server, authority: ScreenAuthority, log: Logger): () => void {
  const live = new Set<() => void>();

  const onUpgrade = async (request: http.IncomingMessage, socket: Duplex, head: Buffer): Promise<void> => {
    socket.on("error", () => undefined);
    const id = newConnectionId();
    const route = routeFor(CAPABILITY_PATH.exec((request.url ?? "").split("?")[0] ?? ""));
    const accept = route ? browserAccept(request) : undefined;
    if (!route || !accept) {
      log.warn("screen.proxy.target_rejected", {
        "screen.connection_id": id,
        "screen.policy": null,
        "screen.reason": route ? "invalid_handshake" : "invalid_path",
        "screen.transport": "websocket",
      });
      refuse(socket, route ? 400 : 404);
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
    const dial = dialGateway(
      authorization.target,
      authorization.ticket,
      route.terminal ? TERMINAL_GATEWAY_PATH : "/v1/rfb",
    );
    // The browser gave up before the gateway answered.
    const gaveUp = (): void => {
      dial.abort();
      log.info("screen.proxy.websocket_closed", {
        ...base,
        "screen.upstream_handshake": false,
        "screen.duration_ms": Math.round(performance.now() - started),
        "screen.closed_by": "client",
      });
    };
    socket.once("close", gaveUp);
    const dialed = await dial.result;
    if (socket.destroyed) {
      if (dialed.ok) dialed.socket.destroy();
      return;
    }
    socket.off("close", gaveUp);
    if (!dialed.ok) {
      log.warn("screen.proxy.websocket_handshake_failed", {
        ...base,
        "screen.status": dialed.status,
        ...(dialed.error ? { "screen.error": dialed.error } : {}),
      });
      refuse(
        socket,
        dialed.status === 410 ? 410 : dialed.status === 403 || dialed.status === 401 ? 403 : 502,
      );
      return;
    }
    const upstream = dialed.socket;
    socket.write(accept);
    if (head.length > 0) socket.unshift(head);
    if (dialed.head && dialed.head.length > 0) upstream.unshift(dialed.head);
    log.info("screen.proxy.websocket_upgraded", base);
    const stop = relayBytes(
      socket,
      upstream,
      {
        closed: (closedBy, code) => {
          live.delete(stop);
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
        error: (side, error) => {
          log.warn("screen.proxy.websocket_error", {
            ...base,
            "screen.side": side,
            "screen.error": (error as NodeJS.ErrnoException).code ?? error.name,
          });
        },
      },
      dialed.reads,
    );
    live.add(stop);
  };

  server.on("upgrade", (request, socket, head) => void onUpgrade(request, socket, head));
  return () => {
    for (const stop of live) stop();
  };
}
