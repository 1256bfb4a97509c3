/**
 * The edge's refusals share the services' error shape (`{"error": {code, message, details?}}`),
 * so a client matches one set of codes whichever listener refused it. A body refusal also asks
 * for the connection to close: the rest of that body is never wanted.
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
  const headers: Record<string, string> = { "content-type": "application/json; charset=utf-8" };
  if (code === "BODY_TOO_LARGE") headers.connection = "close";
  return new Response(JSON.stringify({ error: { code, message, ...(details ? { details } : {}) } }), {
    status: EDGE_REFUSALS[code],
    headers,
  });
}
