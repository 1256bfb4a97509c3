/**
 * Port hosting under `/hosts/<port>-<sandboxId>.<domain>/…` (the SDK's `getHost`): checked per
 * request against the sandbox's state and traffic access token, relayed into the container by
 * `socat` over one stream per client connection and target (`forwardPinned`); a websocket
 * upgrade gets a stream of its own.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { sameSecret, sendJson } from "../http-util.ts";
import { forwardPinned } from "../port-proxy.ts";
import { ApiError, type E2BState, type EmulatedSandbox } from "./state.ts";

const HOST_PREFIX = /^\/hosts\/(\d+)-([a-z0-9]+)\.([^/]+)(\/.*)?$/;
const TRAFFIC_HEADER = "e2b-traffic-access-token";

interface HostTarget {
  readonly sbx: EmulatedSandbox;
  readonly port: number;
  /** The path and query to ask the port for. */
  readonly path: string;
}

/** The hosted port a call is for; undefined when it is not a hosted call; ApiError when refused. */
export function hostTarget(state: E2BState, request: IncomingMessage): HostTarget | undefined {
  const match = HOST_PREFIX.exec(new URL(request.url ?? "/", "http://x").pathname);
  if (!match) return undefined;
  const [, port, id, host, rest] = match;
  const sbx = state.sandboxes.get(id as string);
  if (sbx?.state !== "running" || host !== state.domain) {
    throw new ApiError(502, `sandbox ${id} is not running`);
  }
  if (sbx.trafficAccessToken) {
    const token = request.headers[TRAFFIC_HEADER];
    if (typeof token !== "string" || !sameSecret(token, sbx.trafficAccessToken)) {
      throw new ApiError(403, "missing or invalid traffic access token");
    }
  }
  const raw = request.url ?? "";
  const query = raw.includes("?") ? raw.slice(raw.indexOf("?")) : "";
  return { sbx, port: Number(port), path: `${rest ?? "/"}${query}` };
}

function forwardHeaders(request: IncomingMessage, port: number) {
  const headers: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(request.headers)) {
    if (v === undefined || k === TRAFFIC_HEADER || k === "host") continue;
    headers[k] = v;
  }
  headers.host = `127.0.0.1:${port}`;
  return headers;
}

/** Forwards an admitted HTTP request; one origin serves every sandbox, so the key names both. */
export function proxyHttp(
  state: E2BState,
  request: IncomingMessage,
  response: ServerResponse,
  target: HostTarget,
): void {
  forwardPinned(
    request,
    response,
    {
      key: `${target.sbx.containerId}:${target.port}`,
      connect: () => state.containers.connectPort(target.sbx.containerId, target.port),
      path: target.path,
      headers: forwardHeaders(request, target.port),
    },
    (error) => sendJson(response, 502, { code: 502, message: `port ${target.port}: ${error.message}` }),
  );
}

/** A websocket (or other) upgrade to a hosted port: refused before any byte reaches the machine. */
export async function proxyUpgrade(
  state: E2BState,
  request: IncomingMessage,
  socket: Socket,
  head: Buffer,
): Promise<void> {
  let target: HostTarget | undefined;
  try {
    target = hostTarget(state, request);
    if (!target) throw new ApiError(404, "no such host");
  } catch (error) {
    const status = error instanceof ApiError ? error.status : 500;
    socket.end(`HTTP/1.1 ${status} Refused\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
    return;
  }
  const relay = await state.containers.connectPort(target.sbx.containerId, target.port);
  const headers = forwardHeaders(request, target.port);
  const lines = [`${request.method} ${target.path} HTTP/1.1`];
  for (const [k, v] of Object.entries(headers)) for (const value of [v].flat()) lines.push(`${k}: ${value}`);
  relay.write(`${lines.join("\r\n")}\r\n\r\n`);
  if (head.length > 0) relay.write(head);
  relay.pipe(socket);
  socket.pipe(relay);
  const close = () => {
    relay.destroy();
    socket.destroy();
  };
  relay.on("error", close);
  socket.on("error", close);
  relay.on("end", () => socket.end());
}
