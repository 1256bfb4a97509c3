/**
 * Whether the person behind a request sits on this machine: the socket's peer is a loopback
 * address AND no proxy says it forwarded the request (a reverse proxy on the same host connects
 * from loopback on behalf of anyone).
 */

import type { IncomingMessage } from "node:http";
import type { Context } from "hono";

const FORWARDED = ["forwarded", "x-forwarded-for", "x-forwarded-host", "x-real-ip"];

export function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false;
  const v4 = address.startsWith("::ffff:") ? address.slice("::ffff:".length) : address;
  return v4.startsWith("127.") || address === "::1";
}

export function isLocalClient(c: Context): boolean {
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  if (!isLoopbackAddress(incoming?.socket?.remoteAddress)) return false;
  return FORWARDED.every((name) => c.req.header(name) === undefined);
}
