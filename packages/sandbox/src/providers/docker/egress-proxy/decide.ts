/**
 * Pure allow/deny decisions of the egress proxy. Node builtins only: this folder is
 * bind-mounted read-only into the per-computer proxy container and run there by the image's Node.
 *
 * What must stay true, whatever the policy:
 * - Loopback, link-local (incl. 169.254.169.254), unspecified, multicast and reserved addresses
 *   (address-classes.ts: the IANA special-purpose registries) are never a destination.
 * - Private ranges (RFC 1918, CGNAT, ULA) are refused unless the DEPLOYMENT lists the range in
 *   `privateAllow`; a computer's owner cannot open them.
 * - The host's own addresses (`hostDeny`, and the host's current addresses the proxy re-reads,
 *   host-addresses.ts) are refused even inside an allowed private range; while the current ones
 *   are unknown, every address is refused.
 * - Names are checked after resolution, and the proxy connects only to an address it checked,
 *   so a name resolving (or rebinding) to a forbidden address gets nowhere.
 */
import {
  classOf,
  formatAddress,
  inPrefix,
  type ParsedAddress,
  type Prefix,
  parseAddress,
  parsePrefix,
  unmapped,
} from "./address-classes.ts";

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

export type Denial =
  | "host_not_allowed"
  | "port_not_allowed"
  | "bad_target"
  | "address_forbidden"
  | "address_private"
  | "address_host"
  | "host_addresses_unknown"
  | "unresolved";

/** CIDRs (or bare addresses) as prefixes; IPv4-mapped ones as IPv4. Malformed entries are skipped. */
export function prefixList(cidrs: readonly string[]): Prefix[] {
  return cidrs.flatMap((cidr) => {
    const prefix = parsePrefix(cidr);
    if (!prefix) return [];
    const plain = unmapped(prefix);
    // `::ffff:a.b.c.d/n` covers the IPv4 prefix of n - 96 bits.
    return plain === prefix || prefix.bits < 96 ? [prefix] : [{ ...plain, bits: prefix.bits - 96 }];
  });
}

const inAny = (address: ParsedAddress, prefixes: readonly Prefix[]): boolean =>
  prefixes.some((prefix) => inPrefix(address, prefix));

/** Lowercase, no trailing dot, no IPv6 brackets. */
export function normalizeHost(host: string): string {
  const trimmed = host.trim().toLowerCase().replace(/\.$/, "");
  return trimmed.startsWith("[") && trimmed.endsWith("]") ? trimmed.slice(1, -1) : trimmed;
}

function hostMatches(pattern: string, host: string): boolean {
  const p = normalizeHost(pattern);
  if (p.startsWith("*.")) return host.endsWith(p.slice(1)) && host.length > p.length - 1;
  const literal = parseAddress(p);
  const target = parseAddress(host);
  if (literal && target) return formatAddress(literal) === formatAddress(target);
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
  /** The denial for this address, or null when it may be dialled. */
  check(address: string): Denial | null;
}

/**
 * `hostDeny` beyond the rules' own: the host's current addresses (re-read as they change), or
 * null when they are not known, which refuses every address.
 */
export type HostDenySource = () => readonly Prefix[] | null;

export function addressChecker(rules: EgressRules, hostAddresses?: HostDenySource): AddressChecker {
  const privateAllow = prefixList(rules.privateAllow);
  const hostDeny = prefixList(rules.hostDeny);
  return {
    check(raw) {
      const parsed = parseAddress(raw);
      if (!parsed) return "bad_target";
      const address = unmapped(parsed);
      const kind = classOf(parsed);
      if (kind !== "public" && kind !== "private") return "address_forbidden";
      if (inAny(address, hostDeny)) return "address_host";
      if (hostAddresses) {
        const current = hostAddresses();
        if (current === null) return "host_addresses_unknown";
        if (inAny(address, current)) return "address_host";
      }
      if (kind === "private" && !inAny(address, privateAllow)) return "address_private";
      return null;
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
    // What is dialled is the checked bytes in their one spelling (no zone, no odd form).
    const parsed = verdict === null ? parseAddress(address) : null;
    if (parsed) addresses.push(formatAddress(parsed));
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
