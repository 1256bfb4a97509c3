/**
 * Pure allow/deny decisions of the egress proxy (issue 16). Node builtins only: this folder is
 * bind-mounted read-only into the per-computer proxy container and run there by the image's Node.
 *
 * What must stay true, whatever the policy:
 * - Loopback, link-local (incl. 169.254.169.254), unspecified, multicast and reserved addresses
 *   are never a destination.
 * - Private ranges (RFC 1918, CGNAT, ULA) are refused unless the DEPLOYMENT lists the range in
 *   `privateAllow`; a computer's owner cannot open them.
 * - The host's own addresses (`hostDeny`) are refused even inside an allowed private range.
 * - Names are checked after resolution, and the proxy connects only to an address it checked,
 *   so a name resolving (or rebinding) to a forbidden address gets nowhere.
 */
import { BlockList, isIP } from "node:net";

type EgressMode = "egress" | "allowlist";

interface EgressAllowEntry {
  /** A DNS name (`example.com`), a wildcard (`*.example.com`: subdomains only) or an IP literal. */
  readonly host: string;
  /** Absent: 80 and 443. */
  readonly ports?: readonly number[];
}

export interface EgressRules {
  readonly mode: EgressMode;
  readonly allow: readonly EgressAllowEntry[];
  /** CIDRs of private ranges the deployment opens (e.g. a test's internal network). */
  readonly privateAllow: readonly string[];
  /** Addresses of the host itself: refused even inside `privateAllow`. */
  readonly hostDeny: readonly string[];
}

const DEFAULT_ALLOW_PORTS: readonly number[] = [80, 443];

export type AddressClass =
  | "public"
  | "private"
  | "loopback"
  | "link-local"
  | "unspecified"
  | "multicast"
  | "reserved";

export type Denial =
  | "host_not_allowed"
  | "port_not_allowed"
  | "bad_target"
  | "address_forbidden"
  | "address_private"
  | "address_host"
  | "unresolved";

function blocks(entries: readonly [string, number, "ipv4" | "ipv6"][]): BlockList {
  const list = new BlockList();
  for (const [net, prefix, family] of entries) list.addSubnet(net, prefix, family);
  return list;
}

const LOOPBACK = blocks([
  ["127.0.0.0", 8, "ipv4"],
  ["::1", 128, "ipv6"],
]);
const LINK_LOCAL = blocks([
  ["169.254.0.0", 16, "ipv4"],
  ["fe80::", 10, "ipv6"],
]);
const UNSPECIFIED = blocks([
  ["0.0.0.0", 8, "ipv4"],
  ["::", 128, "ipv6"],
]);
const MULTICAST = blocks([
  ["224.0.0.0", 4, "ipv4"],
  ["ff00::", 8, "ipv6"],
]);
const PRIVATE = blocks([
  ["10.0.0.0", 8, "ipv4"],
  ["172.16.0.0", 12, "ipv4"],
  ["192.168.0.0", 16, "ipv4"],
  ["100.64.0.0", 10, "ipv4"],
  ["fc00::", 7, "ipv6"],
]);
const RESERVED = blocks([
  ["192.0.0.0", 24, "ipv4"],
  ["192.0.2.0", 24, "ipv4"],
  ["198.18.0.0", 15, "ipv4"],
  ["198.51.100.0", 24, "ipv4"],
  ["203.0.113.0", 24, "ipv4"],
  ["240.0.0.0", 4, "ipv4"],
  ["255.255.255.255", 32, "ipv4"],
  ["2001:db8::", 32, "ipv6"],
  // NAT64 and 6to4 embed IPv4 addresses the checks above would not see.
  ["64:ff9b::", 96, "ipv6"],
  ["2002::", 16, "ipv6"],
]);

/** `::ffff:10.0.0.1` is 10.0.0.1: mapped addresses are judged as the IPv4 address they carry. */
function unmapped(address: string): string {
  const match = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return match ? (match[1] as string) : address;
}

export function classifyAddress(raw: string): AddressClass {
  const address = unmapped(raw);
  const version = isIP(address);
  if (version === 0) return "reserved";
  const family = version === 4 ? "ipv4" : "ipv6";
  if (LOOPBACK.check(address, family)) return "loopback";
  if (LINK_LOCAL.check(address, family)) return "link-local";
  if (UNSPECIFIED.check(address, family)) return "unspecified";
  if (MULTICAST.check(address, family)) return "multicast";
  if (PRIVATE.check(address, family)) return "private";
  if (RESERVED.check(address, family)) return "reserved";
  // An IPv6 address with an IPv4-compatible form (`::a.b.c.d`) is deprecated and ambiguous.
  if (family === "ipv6" && /^::[0-9.]+$/.test(address)) return "reserved";
  return "public";
}

function cidrList(cidrs: readonly string[]): BlockList {
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [net, bits] = cidr.split("/");
    const version = isIP(net ?? "");
    if (version === 0) continue;
    const prefix = bits === undefined ? (version === 4 ? 32 : 128) : Number(bits);
    list.addSubnet(net as string, prefix, version === 4 ? "ipv4" : "ipv6");
  }
  return list;
}

/** Lowercase, no trailing dot, no IPv6 brackets. */
export function normalizeHost(host: string): string {
  const trimmed = host.trim().toLowerCase().replace(/\.$/, "");
  return trimmed.startsWith("[") && trimmed.endsWith("]") ? trimmed.slice(1, -1) : trimmed;
}

function hostMatches(pattern: string, host: string): boolean {
  const p = normalizeHost(pattern);
  if (p.startsWith("*.")) return host.endsWith(p.slice(1)) && host.length > p.length - 1;
  if (isIP(p) && isIP(host)) return unmapped(p) === unmapped(host);
  return p === host;
}

/** Whether the policy lets a request name this host and port at all (before resolution). */
export function decideTarget(rules: EgressRules, rawHost: string, port: number): Denial | null {
  const host = normalizeHost(rawHost);
  if (!host || !Number.isInteger(port) || port < 1 || port > 65_535) return "bad_target";
  if (rules.mode === "egress") return null;
  const entries = rules.allow.filter((entry) => hostMatches(entry.host, host));
  if (entries.length === 0) return "host_not_allowed";
  const ok = entries.some((entry) => (entry.ports ?? DEFAULT_ALLOW_PORTS).includes(port));
  return ok ? null : "port_not_allowed";
}

export interface AddressChecker {
  check(address: string): Denial | null;
}

export function addressChecker(rules: EgressRules): AddressChecker {
  const privateAllow = cidrList(rules.privateAllow);
  const hostDeny = cidrList(rules.hostDeny);
  return {
    check(raw) {
      const address = unmapped(raw);
      const version = isIP(address);
      if (version === 0) return "bad_target";
      const family = version === 4 ? "ipv4" : "ipv6";
      if (hostDeny.check(address, family)) return "address_host";
      const kind = classifyAddress(address);
      if (kind === "public") return null;
      if (kind === "private") return privateAllow.check(address, family) ? null : "address_private";
      return "address_forbidden";
    },
  };
}

/**
 * The addresses a request may connect to: those of `resolved` that pass the checker, in order.
 * Empty with the first denial when none does.
 */
export function permittedAddresses(
  checker: AddressChecker,
  resolved: readonly string[],
): { addresses: string[]; denial: Denial | null } {
  if (resolved.length === 0) return { addresses: [], denial: "unresolved" };
  const addresses: string[] = [];
  let denial: Denial | null = null;
  for (const address of resolved) {
    const verdict = checker.check(address);
    if (verdict === null) addresses.push(address);
    else denial ??= verdict;
  }
  return { addresses, denial: addresses.length > 0 ? null : denial };
}

/** `host:port` of a CONNECT request (`[::1]:443` for IPv6). */
export function parseAuthority(authority: string): { host: string; port: number } | null {
  const match = /^\[([^\]]+)\]:(\d{1,5})$/.exec(authority) ?? /^([^:[\]]+):(\d{1,5})$/.exec(authority);
  if (!match) return null;
  return { host: match[1] as string, port: Number(match[2]) };
}
