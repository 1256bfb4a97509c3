/**
 * The Host header names which site a browser thinks it is talking to. A page on another site
 * that rebinds its own name to 127.0.0.1 reaches this listener with its own name in Host; only
 * the names this deployment answers to are served (the configured public URLs, the names other
 * services reach it by, and loopback names, which no foreign site can rebind).
 */

import { isIP } from "node:net";
import type { MiddlewareHandler } from "hono";
import { edgeRefusal } from "./refusal.ts";

/** The host part of a Host header, lowercased, without port, brackets or a trailing dot. */
export function hostnameOf(header: string): string | undefined {
  const value = header.trim().toLowerCase();
  if (value === "") return undefined;
  const bracketed = /^\[([0-9a-f:.]+)\](?::\d{1,5})?$/.exec(value);
  if (bracketed) return bracketed[1];
  const plain = /^([a-z0-9._-]+?)\.?(?::\d{1,5})?$/.exec(value);
  return plain?.[1];
}

export function isLoopbackName(hostname: string): boolean {
  if (hostname === "localhost" || hostname.endsWith(".localhost")) return true;
  if (isIP(hostname) === 4) return hostname.startsWith("127.");
  return hostname === "::1";
}

/** The hostnames of `urls` (undefined entries skipped), for `allowHosts`. */
export function hostnamesOf(urls: readonly (string | undefined)[]): string[] {
  const names: string[] = [];
  for (const url of urls) {
    if (!url) continue;
    try {
      const name = hostnameOf(new URL(url).host);
      if (name) names.push(name);
    } catch {
      // Not a URL: config validation reports it where it is parsed.
    }
  }
  return names;
}

/** Refuses any request whose Host is not loopback or one of `names` (421 `HOST_NOT_ALLOWED`). */
export function allowHosts(names: readonly string[]): MiddlewareHandler {
  const allowed = new Set(names.map((n) => hostnameOf(n) ?? n.toLowerCase()));
  return async (c, next) => {
    // Node always has the header (HTTP/1.1 requires it); an in-process request has only its URL.
    const hostname = hostnameOf(c.req.header("host") ?? new URL(c.req.url).host);
    if (hostname === undefined || !(isLoopbackName(hostname) || allowed.has(hostname))) {
      return edgeRefusal("HOST_NOT_ALLOWED", "this server does not answer to that Host name", {
        hint: "add the name to RAKAZO_ALLOWED_HOSTS",
      });
    }
    return next();
  };
}

/** Whether a browser's `Origin` names this deployment (loopback or one of `names`); `null` never does. */
export function isAllowedOrigin(origin: string, names: readonly string[]): boolean {
  const hostname = hostnamesOf([origin])[0];
  return hostname !== undefined && (isLoopbackName(hostname) || names.includes(hostname));
}
