/**
 * The edge's refusals share the services' error shape (`{"error": {code, message, details?}}`),
 * so a client matches one set of codes whichever listener refused it. A body refusal keeps the
 * connection: closing it with the body still arriving resets it, and the client would see a
 * reset instead of the 413; @hono/node-server discards what is left (at most 500 ms or 64 MiB,
 * nothing kept) and then closes.
 */
export const EDGE_REFUSALS = {
  BODY_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  HOST_NOT_ALLOWED: 421,
} as const;
export type EdgeRefusalCode = keyof typeof EDGE_REFUSALS;

export function edgeRefusal(
  code: EdgeRefusalCode,
  message: string,
  details?: Record<string, unknown>,
): Response {
  return new Response(JSON.stringify({ error: { code, message, ...(details ? { details } : {}) } }), {
    status: EDGE_REFUSALS[code],
    headers: { "content-type": "application/json; charset=utf-8" },
  });
}
