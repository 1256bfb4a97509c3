/**
 * The screen gateway's wire constants (SCR-1..4), shared by the supervisor's gateway, the web
 * proxy and the host: the ticket header, WebSocket close codes, and where a gateway is reached.
 */
import { z } from "zod";

/** The gateway ticket travels in this header, never in a URL (SCR-4). */
export const TICKET_HEADER = "x-rakazo-screen-ticket";
/** A revocation matched the connection's capability. */
export const CLOSE_REVOKED = 4001;
/** The slot the connection watched was released or reused (SCR-3). */
export const CLOSE_SLOT_CLOSED = 4002;
/** A control connection reached its capability's expiry, i.e. its control lease's (TKO-1). */
export const CLOSE_EXPIRED = 4003;
/** RFC 6455 policy violation: a client sent what its policy forbids. */
export const CLOSE_POLICY = 1008;

/** A sealed capability or ticket: `rs1.<kid>.<base64url>` (capability-codec.ts). */
export const TICKET_PATTERN = /^rs1\.[A-Za-z0-9_-]{1,32}\.[A-Za-z0-9_-]{20,2000}$/;

/** Where the web service reaches a computer's gateway. Never shown to browsers (SCR-4). */
export const screenGatewayTargetSchema = z.discriminatedUnion("transport", [
  z.object({
    transport: z.literal("unix"),
    // sun_path holds 108 bytes including the terminating NUL.
    socketPath: z.string().startsWith("/").max(107),
  }),
  z.object({
    transport: z.literal("http"),
    url: z.url({ protocol: /^https?$/ }),
    /** Provider credentials for protected port hosting (PRV-4); sent by the proxy only. */
    headers: z.record(z.string(), z.string()).optional(),
  }),
]);
export type ScreenGatewayTarget =
  | { readonly transport: "unix"; readonly socketPath: string }
  | {
      readonly transport: "http";
      readonly url: string;
      readonly headers?: Readonly<Record<string, string>>;
    };

/**
 * `path` under an HTTP target's base URL, keeping the base's path and query: Boat's protected
 * port hosting admits only a `_token` query parameter, so the base may carry one (server-side
 * only, SCR-4). `new URL(path, base)` would drop both.
 */
export function gatewayUrl(base: string, path: string): URL {
  const url = new URL(base);
  url.pathname = `${url.pathname.replace(/\/$/, "")}${path}`;
  return url;
}

/**
 * The supervisor's RPC on a TCP gateway listener (CMP-8, remote computers): `POST
 * /v1/rpc/<method>` with the same JSON params and answers as the Unix socket's `/rpc/<method>`,
 * admitted only with the daemon's RPC key in this header. The daemon makes a fresh key each time
 * it starts and writes it to `rpc.key` in its run dir (0600); the host reads it through the
 * provider's file API, so the key never travels in a URL and rotates with the daemon.
 */
export const SUPERVISOR_RPC_KEY_HEADER = "x-rakazo-supervisor-key";
export const SUPERVISOR_RPC_PATH = "/v1/rpc/";
export const SUPERVISOR_RPC_KEY_FILE = "rpc.key";
/** 32 random bytes, base64url. */
export const SUPERVISOR_RPC_KEY_PATTERN = /^[A-Za-z0-9_-]{43}$/;
