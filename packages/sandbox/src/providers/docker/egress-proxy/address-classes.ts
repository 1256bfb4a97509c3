/**
 * What kind of destination an IP address is, for the egress proxy: one table after the IANA
 * special-purpose address registries (IPv4 and IPv6), matched by longest prefix on the parsed
 * bytes. Node builtins only (this folder runs in the proxy's container).
 *
 * What must stay true:
 * - Every spelling of an address is parsed to its 16 (or 4) bytes before it is classified:
 *   case, leading zeros, `::` anywhere, a trailing dotted quad, brackets and a zone id
 *   (`%eth0`, dropped) never change the class.
 * - An IPv6 address that carries an IPv4 address is judged by what reaching it would reach.
 *   IPv4-mapped (`::ffff:a.b.c.d`) is how an IPv4 destination appears on a dual-stack socket,
 *   and dialling it dials that IPv4 address, so it takes the class of the IPv4 address it
 *   carries (and the deployment's private ranges apply to it). Every other form reaches its IPv4
 *   address, if at all, through a translator or tunnel this proxy cannot see, and the proxy
 *   resolves names itself, so no legitimate answer needs them: IPv4-compatible (`::a.b.c.d`),
 *   IPv4-translated (`::ffff:0:a.b.c.d`), NAT64 (`64:ff9b::/96`, `64:ff9b:1::/48`), 6to4
 *   (`2002::/16`) and Teredo (`2001::/32`) are refused outright, whatever they carry. The cost:
 *   on an IPv6-only host whose resolver answers with DNS64 addresses, IPv4-only sites are out
 *   of reach through the proxy.
 * - IPv6 outside global unicast (`2000::/3`) is refused unless a row says otherwise: nothing
 *   reachable is assigned there, so an address the registry adds later is refused until listed.
 */
import { isIP } from "node:net";

export type AddressClass =
  | "public"
  | "private"
  | "loopback"
  | "link-local"
  | "unspecified"
  | "multicast"
  | "reserved";

/** A row's verdict: a class, or "the class of the IPv4 address in the last 32 bits". */
type Verdict = AddressClass | "embedded-ipv4";

/**
 * The table, written once: `[prefix, verdict, registry name and RFC]`. The longest matching
 * prefix wins; `0.0.0.0/0` and `::/0` are the defaults. `private` is the only class a
 * deployment may open (`COMPUTER_EGRESS_PRIVATE_ALLOW`); everything but `public` and `private`
 * is refused whatever the deployment says.
 */
export const SPECIAL_PURPOSE: readonly (readonly [string, Verdict, string])[] = [
  // IPv4 (iana.org/assignments/iana-ipv4-special-registry, plus multicast and limited broadcast).
  ["0.0.0.0/0", "public", "default"],
  ["0.0.0.0/8", "unspecified", "this network (RFC 791)"],
  ["10.0.0.0/8", "private", "private use (RFC 1918)"],
  ["100.64.0.0/10", "private", "shared address space, CGNAT (RFC 6598)"],
  ["127.0.0.0/8", "loopback", "loopback (RFC 1122)"],
  ["169.254.0.0/16", "link-local", "link local, incl. cloud metadata (RFC 3927)"],
  ["172.16.0.0/12", "private", "private use (RFC 1918)"],
  // Incl. DS-Lite 192.0.0.0/29, 192.0.0.8/32, the PCP/TURN anycasts and NAT64 discovery.
  ["192.0.0.0/24", "reserved", "IETF protocol assignments (RFC 6890)"],
  ["192.0.2.0/24", "reserved", "documentation, TEST-NET-1 (RFC 5737)"],
  ["192.31.196.0/24", "reserved", "AS112-v4 (RFC 7535)"],
  ["192.52.193.0/24", "reserved", "AMT (RFC 7450)"],
  ["192.88.99.0/24", "reserved", "deprecated 6to4 relay anycast (RFC 7526)"],
  ["192.168.0.0/16", "private", "private use (RFC 1918)"],
  ["192.175.48.0/24", "reserved", "direct delegation AS112 service (RFC 7534)"],
  ["198.18.0.0/15", "reserved", "benchmarking (RFC 2544)"],
  ["198.51.100.0/24", "reserved", "documentation, TEST-NET-2 (RFC 5737)"],
  ["203.0.113.0/24", "reserved", "documentation, TEST-NET-3 (RFC 5737)"],
  ["224.0.0.0/4", "multicast", "multicast (RFC 5771)"],
  ["240.0.0.0/4", "reserved", "reserved (RFC 1112)"],
  ["255.255.255.255/32", "reserved", "limited broadcast (RFC 919)"],
  // IPv6 (iana.org/assignments/iana-ipv6-special-registry, plus the address architecture).
  ["::/0", "reserved", "outside global unicast: unassigned or reserved by the IETF (RFC 4291)"],
  ["2000::/3", "public", "global unicast (RFC 4291)"],
  ["::/128", "unspecified", "unspecified address (RFC 4291)"],
  ["::1/128", "loopback", "loopback address (RFC 4291)"],
  ["::/96", "reserved", "IPv4-compatible, deprecated (RFC 4291)"],
  ["::ffff:0:0/96", "embedded-ipv4", "IPv4-mapped (RFC 4291)"],
  ["::ffff:0:0:0/96", "reserved", "IPv4-translated (RFC 2765)"],
  ["64:ff9b::/96", "reserved", "IPv4-IPv6 translation, well-known NAT64 prefix (RFC 6052)"],
  ["64:ff9b:1::/48", "reserved", "IPv4-IPv6 translation, local use (RFC 8215)"],
  ["100::/64", "reserved", "discard-only (RFC 6666)"],
  ["100:0:0:1::/64", "reserved", "dummy IPv6 prefix (RFC 9780)"],
  ["2001::/23", "reserved", "IETF protocol assignments (RFC 2928)"],
  ["2001::/32", "reserved", "Teredo (RFC 4380)"],
  ["2001:1::1/128", "reserved", "port control protocol anycast (RFC 7723)"],
  ["2001:1::2/128", "reserved", "TURN anycast (RFC 8155)"],
  ["2001:1::3/128", "reserved", "DNS-SD service registration protocol anycast (RFC 9665)"],
  ["2001:2::/48", "reserved", "benchmarking (RFC 5180)"],
  ["2001:3::/32", "reserved", "AMT (RFC 7450)"],
  ["2001:4:112::/48", "reserved", "AS112-v6 (RFC 7535)"],
  ["2001:10::/28", "reserved", "ORCHID, deprecated (RFC 4843)"],
  ["2001:20::/28", "reserved", "ORCHIDv2 (RFC 7343)"],
  ["2001:30::/28", "reserved", "drone remote ID protocol entity tags (RFC 9374)"],
  ["2001:db8::/32", "reserved", "documentation (RFC 3849)"],
  ["2002::/16", "reserved", "6to4 (RFC 3056)"],
  ["2620:4f:8000::/48", "reserved", "direct delegation AS112 service (RFC 7534)"],
  ["3fff::/20", "reserved", "documentation (RFC 9637)"],
  ["5f00::/16", "reserved", "segment routing SIDs (RFC 9602)"],
  ["fc00::/7", "private", "unique local (RFC 4193)"],
  ["fe80::/10", "link-local", "link-local unicast (RFC 4291)"],
  ["fec0::/10", "reserved", "site-local, deprecated (RFC 3879)"],
  ["ff00::/8", "multicast", "multicast (RFC 4291)"],
];

export interface ParsedAddress {
  readonly family: 4 | 6;
  /** 4 bytes (IPv4) or 16 (IPv6), network order. */
  readonly bytes: Uint8Array;
}

export interface Prefix extends ParsedAddress {
  readonly bits: number;
}

/**
 * The bytes of an IP address in any textual form Node accepts (`net.isIP`), with optional
 * brackets and an IPv6 zone id; null for anything else (names, `127.1`, `0x7f.0.0.1`).
 */
export function parseAddress(text: string): ParsedAddress | null {
  let raw = text.trim();
  if (raw.startsWith("[") && raw.endsWith("]")) raw = raw.slice(1, -1);
  const zone = raw.indexOf("%");
  if (zone !== -1 && raw.includes(":")) raw = raw.slice(0, zone);
  const version = isIP(raw);
  if (version === 4) return { family: 4, bytes: Uint8Array.from(raw.split("."), Number) };
  if (version !== 6) return null;
  let body = raw.toLowerCase();
  // A trailing dotted quad is the last two groups.
  const quad = /^(.*:)(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(body);
  if (quad) {
    const [a, b, c, d] = quad.slice(2).map(Number) as [number, number, number, number];
    body = `${quad[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = body.split("::");
  const head = halves[0] ? halves[0].split(":") : [];
  const tail = halves.length > 1 && halves[1] ? halves[1].split(":") : [];
  const zeros = halves.length > 1 ? 8 - head.length - tail.length : 0;
  const groups = [...head, ...Array<string>(Math.max(0, zeros)).fill("0"), ...tail];
  if (groups.length !== 8) return null;
  const bytes = new Uint8Array(16);
  for (const [index, group] of groups.entries()) {
    if (!/^[0-9a-f]{1,4}$/.test(group)) return null;
    const value = Number.parseInt(group, 16);
    bytes[index * 2] = value >> 8;
    bytes[index * 2 + 1] = value & 0xff;
  }
  return { family: 6, bytes };
}

/** `a.b.c.d/n`, `x::/n` or a bare address (a host prefix); null when malformed. */
export function parsePrefix(text: string): Prefix | null {
  const slash = text.indexOf("/");
  const address = parseAddress(slash === -1 ? text : text.slice(0, slash));
  if (!address) return null;
  const max = address.family === 4 ? 32 : 128;
  const bitsText = slash === -1 ? String(max) : text.slice(slash + 1).trim();
  if (!/^\d{1,3}$/.test(bitsText) || Number(bitsText) > max) return null;
  return { ...address, bits: Number(bitsText) };
}

export function inPrefix(address: ParsedAddress, prefix: Prefix): boolean {
  if (address.family !== prefix.family) return false;
  const whole = prefix.bits >> 3;
  for (let index = 0; index < whole; index += 1) {
    if (address.bytes[index] !== prefix.bytes[index]) return false;
  }
  const rest = prefix.bits & 7;
  if (rest === 0) return true;
  const mask = (0xff << (8 - rest)) & 0xff;
  return (((address.bytes[whole] as number) ^ (prefix.bytes[whole] as number)) & mask) === 0;
}

/** An IPv4-mapped address as the IPv4 address it is; any other address unchanged. */
export function unmapped(address: ParsedAddress): ParsedAddress {
  if (address.family !== 6) return address;
  const { bytes } = address;
  for (let index = 0; index < 10; index += 1) if (bytes[index] !== 0) return address;
  if (bytes[10] !== 0xff || bytes[11] !== 0xff) return address;
  return { family: 4, bytes: bytes.slice(12) };
}

const TABLE: readonly { readonly prefix: Prefix; readonly verdict: Verdict }[] = SPECIAL_PURPOSE.map(
  ([cidr, verdict]) => {
    const prefix = parsePrefix(cidr);
    if (!prefix) throw new Error(`address-classes: bad row ${cidr}`);
    return { prefix, verdict };
  },
);

function verdictOf(address: ParsedAddress): Verdict {
  let best: { readonly prefix: Prefix; readonly verdict: Verdict } | undefined;
  for (const row of TABLE) {
    if (inPrefix(address, row.prefix) && (!best || row.prefix.bits > best.prefix.bits)) best = row;
  }
  // The defaults (`0.0.0.0/0`, `::/0`) match every address of their family.
  return (best as NonNullable<typeof best>).verdict;
}

/** The class of a parsed address; an IPv4-mapped one takes the class of its IPv4 address. */
export function classOf(address: ParsedAddress): AddressClass {
  const verdict = verdictOf(address);
  return verdict === "embedded-ipv4" ? (verdictOf(unmapped(address)) as AddressClass) : verdict;
}

/** The class of an address in any spelling; text that is no address is `reserved` (refused). */
export function classifyAddress(text: string): AddressClass {
  const address = parseAddress(text);
  return address ? classOf(address) : "reserved";
}

/** The one spelling of an address: IPv4-mapped as IPv4, IPv6 compressed (RFC 5952), no zone. */
export function formatAddress(address: ParsedAddress): string {
  const plain = unmapped(address);
  if (plain.family === 4) return Array.from(plain.bytes).join(".");
  const groups: string[] = [];
  for (let index = 0; index < 16; index += 2) {
    groups.push((((plain.bytes[index] as number) << 8) | (plain.bytes[index + 1] as number)).toString(16));
  }
  // WHATWG URL serialisation compresses the longest zero run, as RFC 5952 asks.
  return new URL(`http://[${groups.join(":")}]/`).hostname.slice(1, -1);
}

export function canonicalAddress(text: string): string | null {
  const address = parseAddress(text);
  return address ? formatAddress(address) : null;
}
