/**
 * Which browser pages may call the bridge, as the MCP streamable HTTP transport requires of a
 * server (it MUST check Origin, so a page the user merely visits — or a DNS-rebinding one that
 * reaches a loopback bridge — cannot drive it):
 * - no `Origin` header: not a browser (harnesses, curl, the SDK's Node client) — allowed;
 * - an origin in BRIDGE_ALLOWED_ORIGINS — allowed, with CORS answers;
 * - a loopback origin (`http(s)://localhost|127.x.x.x|[::1]` on any port) — allowed while the
 *   bridge itself listens on a loopback address: only the machine's own pages reach it then,
 *   and a local tool (MCP Inspector) works without configuration. Listening elsewhere, loopback
 *   origins must be listed like any other;
 * - anything else (including `null`) — 403.
 * Allowed is not authorized: every request still needs a client's bridge token.
 */

export interface OriginPolicy {
  /** Serialized origins (BRIDGE_ALLOWED_ORIGINS, already normalized by the config). */
  readonly allowed: readonly string[];
  /** Whether loopback origins are allowed without being listed. */
  readonly loopback: boolean;
}

/** Whether a request with this `Origin` header (undefined: none) may proceed. */
export function originAllowed(policy: OriginPolicy, origin: string | undefined): boolean {
  if (origin === undefined) return true;
  if (policy.allowed.includes(origin)) return true;
  return policy.loopback && isLoopbackOrigin(origin);
}

/** Whether the bridge listening on `host` is reachable only from this machine. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, "$1").toLowerCase();
  return bare === "localhost" || bare === "::1" || /^127(\.\d{1,3}){3}$/.test(bare);
}

function isLoopbackOrigin(origin: string): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  return (url.protocol === "http:" || url.protocol === "https:") && isLoopbackHost(url.hostname);
}

/** What a browser client may send and read: the MCP transport's headers and the bridge's own. */
const ALLOW_HEADERS = [
  "authorization",
  "content-type",
  "accept",
  "mcp-session-id",
  "mcp-protocol-version",
  "last-event-id",
  "x-rakazo-conversation",
  "x-rakazo-team-root",
].join(", ");

/** Headers on every answer to an allowed browser origin. */
export function corsHeaders(origin: string): Record<string, string> {
  return {
    "access-control-allow-origin": origin,
    "access-control-expose-headers": "mcp-session-id, mcp-protocol-version",
    vary: "Origin",
  };
}

/** The answer to an allowed origin's preflight (no credentials: the token is a header, not a cookie). */
export function preflight(origin: string): Response {
  return new Response(null, {
    status: 204,
    headers: {
      ...corsHeaders(origin),
      "access-control-allow-methods": "GET, POST, DELETE, OPTIONS",
      "access-control-allow-headers": ALLOW_HEADERS,
      "access-control-max-age": "600",
    },
  });
}
