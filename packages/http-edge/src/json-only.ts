/**
 * A request that changes state and carries a body must say it is JSON. Browsers send
 * `text/plain`, form and multipart bodies cross-site without asking (CORS "simple requests");
 * a JSON content type makes them ask first, and no listener here answers that preflight.
 */
import type { Context, MiddlewareHandler } from "hono";
import { edgeRefusal } from "./refusal.ts";

const JSON_TYPE = /^application\/(?:[a-z0-9.+-]+\+)?json\s*(?:;|$)/i;

export function isJsonContentType(value: string | undefined): boolean {
  return value !== undefined && JSON_TYPE.test(value.trim());
}

/** The 415 `UNSUPPORTED_MEDIA_TYPE` for a body not declared JSON; none for JSON or no body. */
export function notJsonRefusal(c: Context): Response | undefined {
  const declared = c.req.raw.headers.get("content-type") ?? undefined;
  if (!carriesBody(c.req.raw, c.env) || isJsonContentType(declared)) return undefined;
  return edgeRefusal("UNSUPPORTED_MEDIA_TYPE", "send the body as application/json");
}

/** `notJsonRefusal` as a middleware. */
export function requireJsonBody(): MiddlewareHandler {
  return async (c, next) => notJsonRefusal(c) ?? next();
}

/** From the headers: a declared length over zero or chunked framing (HTTP/1.1 has no other body). */
function carriesBody(request: Request, env: unknown): boolean {
  const declared = request.headers.get("content-length");
  if (declared !== null) return Number(declared) !== 0;
  if (request.headers.has("transfer-encoding")) return true;
  // Served by Node: no length and no chunking means no body. In-process (tests), trust the object.
  const servedByNode = typeof env === "object" && env !== null && "incoming" in env;
  return !servedByNode && request.body !== null;
}
