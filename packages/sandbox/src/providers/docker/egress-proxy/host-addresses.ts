/**
 * The host's own addresses, for the egress proxy's `address_host` refusals. Node builtins only:
 * the host-address watcher (host-watch.ts, one container in the host's network namespace) reads
 * them and rewrites one file; every egress proxy (in its own namespace, where the host's
 * interfaces are invisible) re-reads that file before a decision, at most once a second.
 *
 * What must stay true:
 * - "The host's addresses" are every destination the host's kernel takes as its own, on any
 *   interface, up or down: IPv4 `local` and `broadcast` routes of every routing table
 *   (/proc/net/fib_trie), every configured IPv6 address (/proc/net/if_inet6, tentative ones and
 *   those of down interfaces too) and IPv6 `local`/`anycast` routes (/proc/net/ipv6_route).
 *   `os.networkInterfaces()` alone is not enough: it omits interfaces that are down or have no
 *   carrier (`docker0` with no container attached).
 * - A proxy that cannot read the file, or finds it older than `maxAgeMs` (the watcher touches
 *   it every few seconds), does not know the host's addresses and refuses every address.
 */
import { readFileSync, renameSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { networkInterfaces } from "node:os";
import { join } from "node:path";
import { formatAddress, type Prefix, parsePrefix } from "./address-classes.ts";

export const HOST_ADDRESSES_FILE = "addresses.json";

/** `a.b.c.d/n` of each IPv4 `local` or `broadcast` route in /proc/net/fib_trie (any table). */
export function parseFibTrie(text: string): string[] {
  const found: string[] = [];
  let leaf: string | undefined;
  for (const line of text.split("\n")) {
    const node = /^\s*\|-- (\d+\.\d+\.\d+\.\d+)\s*$/.exec(line);
    if (node) {
      leaf = node[1];
      continue;
    }
    const route = /^\s+\/(\d+) \S+ (LOCAL|BROADCAST)\b/.exec(line);
    if (route && leaf) found.push(`${leaf}/${route[1]}`);
    else if (!/^\s+\/\d+ /.test(line)) leaf = undefined;
  }
  return found;
}

/** Eight groups of four hex digits, from /proc's 32-digit spelling. */
function procV6(hex: string): string | null {
  if (!/^[0-9a-f]{32}$/i.test(hex)) return null;
  return hex.match(/.{4}/g)?.join(":") ?? null;
}

/** Every configured IPv6 address, as `/128`, from /proc/net/if_inet6. */
export function parseIfInet6(text: string): string[] {
  return text.split("\n").flatMap((line) => {
    const address = procV6(line.trim().split(/\s+/)[0] ?? "");
    return address ? [`${address}/128`] : [];
  });
}

const RTF_ANYCAST = 0x0010_0000;
const RTF_LOCAL = 0x8000_0000;

/** IPv6 `local` and `anycast` routes (e.g. `ip -6 route add local …`) from /proc/net/ipv6_route. */
export function parseIpv6Route(text: string): string[] {
  return text.split("\n").flatMap((line) => {
    const fields = line.trim().split(/\s+/);
    const address = procV6(fields[0] ?? "");
    const flags = Number.parseInt(fields[8] ?? "", 16);
    if (!address || !Number.isFinite(flags) || (flags & (RTF_LOCAL | RTF_ANYCAST)) === 0) return [];
    return [`${address}/${Number.parseInt(fields[1] ?? "80", 16)}`];
  });
}

/** Prefixes in one spelling, without duplicates, sorted: equal lists are equal text. */
export function canonicalPrefixes(cidrs: readonly string[]): string[] {
  const out = new Set<string>();
  for (const cidr of cidrs) {
    const prefix = parsePrefix(cidr);
    if (prefix) out.add(`${formatAddress(prefix)}/${prefix.bits}`);
  }
  return [...out].sort();
}

export type ReadText = (path: string) => string;

const readProc: ReadText = (path) => readFileSync(path, "utf8");

/**
 * Every address of the host whose network namespace this process is in. A /proc file that
 * cannot be read contributes nothing; `os.networkInterfaces()` is always added (it is what a
 * system without /proc has).
 */
export function readHostAddresses(read: ReadText = readProc, interfaces = networkInterfaces): string[] {
  const attempt = (path: string, parse: (text: string) => string[]): string[] => {
    try {
      return parse(read(path));
    } catch {
      return [];
    }
  };
  const listed = Object.values(interfaces())
    .flatMap((entries) => entries ?? [])
    .map((entry) => entry.address.replace(/%.*$/, ""));
  return canonicalPrefixes([
    ...attempt("/proc/net/fib_trie", parseFibTrie),
    ...attempt("/proc/net/if_inet6", parseIfInet6),
    ...attempt("/proc/net/ipv6_route", parseIpv6Route),
    ...listed,
  ]);
}

/** Replaces `<dir>/addresses.json` atomically (a reader sees the old file or the new one). */
export function writeHostAddresses(dir: string, addresses: readonly string[]): void {
  const temp = join(dir, `.${HOST_ADDRESSES_FILE}.${process.pid}`);
  writeFileSync(temp, `${JSON.stringify({ addresses })}\n`, { mode: 0o644 });
  renameSync(temp, join(dir, HOST_ADDRESSES_FILE));
}

export interface HostAddressWatchOptions {
  readonly dir: string;
  readonly read?: () => string[];
  readonly intervalMs?: number;
  /** How often an unchanged file is touched, so readers can tell the watcher is alive. */
  readonly heartbeatMs?: number;
  readonly log?: (event: Record<string, unknown>) => void;
}

/** Re-reads the host's addresses every `intervalMs`, rewriting the file when they change. */
export function watchHostAddresses(options: HostAddressWatchOptions): { stop(): void } {
  const read = options.read ?? (() => readHostAddresses());
  const heartbeatMs = options.heartbeatMs ?? 5_000;
  const file = join(options.dir, HOST_ADDRESSES_FILE);
  let last = "";
  let touched = 0;
  const tick = (): void => {
    const addresses = read();
    const text = JSON.stringify(addresses);
    const now = Date.now();
    if (text !== last) {
      writeHostAddresses(options.dir, addresses);
      options.log?.({ event: "egress.host_addresses", count: addresses.length });
      last = text;
      touched = now;
    } else if (now - touched >= heartbeatMs) {
      utimesSync(file, now / 1000, now / 1000);
      touched = now;
    }
  };
  tick();
  const timer = setInterval(() => {
    try {
      tick();
    } catch (error) {
      // A failed write leaves the file to age: readers then refuse every address.
      options.log?.({ event: "egress.host_addresses_failed", error: (error as Error).message });
    }
  }, options.intervalMs ?? 1_000);
  return { stop: () => clearInterval(timer) };
}

export interface HostAddressFileOptions {
  /** Older than this (ms since its last write or touch), the file says nothing. Default 30 s. */
  readonly maxAgeMs?: number;
  /** The file is looked at again after this long. Default 1 s. */
  readonly recheckMs?: number;
  readonly now?: () => number;
}

/**
 * The host's addresses from the watcher's file, looked at again at most once per `recheckMs` and
 * parsed again only when its text changed; null (refuse everything) while it is missing, stale
 * or malformed.
 */
export function hostAddressFile(
  path: string,
  options: HostAddressFileOptions = {},
): () => readonly Prefix[] | null {
  const maxAgeMs = options.maxAgeMs ?? 30_000;
  const recheckMs = options.recheckMs ?? 1_000;
  const now = options.now ?? Date.now;
  let checkedAt = Number.NEGATIVE_INFINITY;
  let seen = "";
  let prefixes: readonly Prefix[] | null = null;
  let modifiedAt = Number.NEGATIVE_INFINITY;
  const look = (): void => {
    try {
      modifiedAt = statSync(path).mtimeMs;
      const text = readFileSync(path, "utf8");
      if (text === seen && prefixes !== null) return;
      const parsed = JSON.parse(text) as { addresses?: unknown };
      if (!Array.isArray(parsed.addresses)) throw new Error("no addresses");
      prefixes = parsed.addresses.flatMap((cidr) => {
        const prefix = typeof cidr === "string" ? parsePrefix(cidr) : null;
        return prefix ? [prefix] : [];
      });
      seen = text;
    } catch {
      prefixes = null;
      seen = "";
    }
  };
  return () => {
    const at = now();
    if (at - checkedAt >= recheckMs) {
      checkedAt = at;
      look();
    }
    return prefixes !== null && at - modifiedAt <= maxAgeMs ? prefixes : null;
  };
}
