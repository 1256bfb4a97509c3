/**
 * Whether the person behind a request sits on this machine: the socket's peer is a loopback
 * address AND no proxy says it forwarded the request (a reverse proxy on the same host connects
 * from loopback on behalf of anyone). A request with no socket at all was made in this process
 * (`app.request`), which is as local as it gets.
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
  if (incoming !== undefined && !isLoopbackAddress(incoming.socket?.remoteAddress)) return false;
  return FORWARDED.every((name) => c.req.header(name) === undefined);
}
