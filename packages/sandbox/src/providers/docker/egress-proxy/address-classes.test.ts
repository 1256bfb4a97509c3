/**
 * The egress proxy's address classes against the IANA special-purpose registries (IPv4 and
 * IPv6), the IPv6 forms that carry an IPv4 address, and odd spellings of the same bytes.
 */
import { describe, expect, it } from "vitest";
import {
  type AddressClass,
  canonicalAddress,
  classifyAddress,
  inPrefix,
  parseAddress,
  parsePrefix,
  SPECIAL_PURPOSE,
} from "./address-classes.ts";

/** One address inside each registry row (and at its edges), with the class the proxy gives it. */
const IPV4: readonly [string, AddressClass][] = [
  ["0.0.0.0", "unspecified"],
  ["0.255.255.255", "unspecified"],
  ["10.0.0.1", "private"],
  ["10.255.255.255", "private"],
  ["100.64.0.1", "private"],
  ["100.127.255.255", "private"],
  ["100.128.0.0", "public"],
  ["127.0.0.1", "loopback"],
  ["127.255.255.254", "loopback"],
  ["169.254.169.254", "link-local"],
  ["172.16.0.1", "private"],
  ["172.31.255.255", "private"],
  ["172.32.0.0", "public"],
  ["192.0.0.1", "reserved"],
  ["192.0.0.170", "reserved"],
  ["192.0.2.1", "reserved"],
  ["192.31.196.1", "reserved"],
  ["192.52.193.1", "reserved"],
  ["192.88.99.1", "reserved"],
  ["192.168.1.1", "private"],
  ["192.175.48.1", "reserved"],
  ["198.18.0.1", "reserved"],
  ["198.19.255.255", "reserved"],
  ["198.20.0.0", "public"],
  ["198.51.100.1", "reserved"],
  ["203.0.113.1", "reserved"],
  ["224.0.0.1", "multicast"],
  ["239.255.255.255", "multicast"],
  ["240.0.0.1", "reserved"],
  ["255.255.255.255", "reserved"],
  ["93.184.216.34", "public"],
  ["11.22.33.44", "public"],
  ["1.1.1.1", "public"],
];

const IPV6: readonly [string, AddressClass][] = [
  ["::", "unspecified"],
  ["::1", "loopback"],
  // IPv4-mapped: the IPv4 address it carries decides.
  ["::ffff:127.0.0.1", "loopback"],
  ["::ffff:169.254.169.254", "link-local"],
  ["::ffff:10.0.0.1", "private"],
  ["::ffff:192.0.2.1", "reserved"],
  ["::ffff:93.184.216.34", "public"],
  ["::ffff:5db8:d822", "public"],
  // IPv4-compatible (deprecated), IPv4-translated, NAT64 (both), 6to4, Teredo: refused outright,
  // whatever IPv4 address they carry.
  ["::7f00:1", "reserved"],
  ["::127.0.0.1", "reserved"],
  ["::5db8:d822", "reserved"],
  ["::ffff:0:7f00:1", "reserved"],
  ["::ffff:0:5db8:d822", "reserved"],
  ["64:ff9b::a9fe:a9fe", "reserved"],
  ["64:ff9b::93.184.216.34", "reserved"],
  ["64:ff9b:1::7f00:1", "reserved"],
  ["64:ff9b:1:ffff::1", "reserved"],
  ["2002:7f00:1::1", "reserved"],
  ["2002:5db8:d822::1", "reserved"],
  ["2001::1", "reserved"],
  ["2001:0:4136:e378:8000:63bf:3fff:fdd2", "reserved"],
  // IETF protocol assignments and the rows inside them.
  ["2001:1::1", "reserved"],
  ["2001:1::2", "reserved"],
  ["2001:1::3", "reserved"],
  ["2001:2::1", "reserved"],
  ["2001:3::1", "reserved"],
  ["2001:4:112::1", "reserved"],
  ["2001:10::1", "reserved"],
  ["2001:20::1", "reserved"],
  ["2001:30::1", "reserved"],
  ["2001:1ff:ffff::1", "reserved"],
  ["2001:200::1", "public"],
  // Documentation, discard-only, dummy, AS112, SRv6.
  ["2001:db8::1", "reserved"],
  ["2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", "reserved"],
  ["3fff::1", "reserved"],
  ["3fff:fff::1", "reserved"],
  ["3fff:1000::1", "public"],
  ["100::1", "reserved"],
  ["100:0:0:1::1", "reserved"],
  ["2620:4f:8000::1", "reserved"],
  ["5f00::1", "reserved"],
  // Local scopes.
  ["fc00::1", "private"],
  ["fd12:3456::1", "private"],
  ["fe80::1", "link-local"],
  ["febf:ffff::1", "link-local"],
  ["fec0::1", "reserved"],
  ["feff::1", "reserved"],
  ["ff02::1", "multicast"],
  ["ff0e::1", "multicast"],
  // Outside global unicast (2000::/3): nothing is assigned there.
  ["1::1", "reserved"],
  ["4000::1", "reserved"],
  ["e000::1", "reserved"],
  // Global unicast.
  ["2606:4700::1111", "public"],
  ["2a00:1450:4001::1", "public"],
  ["3ffe::1", "public"],
];

describe("classifyAddress: IPv4 special-purpose registry", () => {
  it.each(IPV4)("%s is %s", (address, kind) => {
    expect(classifyAddress(address)).toBe(kind);
  });
});

describe("classifyAddress: IPv6 special-purpose registry and embedded IPv4", () => {
  it.each(IPV6)("%s is %s", (address, kind) => {
    expect(classifyAddress(address)).toBe(kind);
  });
});

describe("the table", () => {
  it("every row is exercised by an address above", () => {
    const addresses = [...IPV4, ...IPV6].map(([text]) => parseAddress(text));
    for (const [cidr] of SPECIAL_PURPOSE) {
      const prefix = parsePrefix(cidr);
      expect(prefix, cidr).not.toBeNull();
      const hit = addresses.some((address) => address && prefix && inPrefix(address, prefix));
      expect(hit, `no test address in ${cidr}`).toBe(true);
    }
  });
});

describe("odd spellings are the same bytes", () => {
  it.each([
    ["::FFFF:127.0.0.1", "loopback"],
    ["0:0:0:0:0:ffff:7f00:1", "loopback"],
    ["0000:0000:0000:0000:0000:FFFF:7F00:0001", "loopback"],
    ["::ffff:7f00:0001", "loopback"],
    ["[::ffff:127.0.0.1]", "loopback"],
    ["0:0:0:0:0:0:0:1", "loopback"],
    ["::0:1", "loopback"],
    ["0::1", "loopback"],
    ["fe80::1%eth0", "link-local"],
    ["FE80::1%25lo", "link-local"],
    ["::ffff:169.254.169.254%eth0", "link-local"],
    ["0:0:0:0:0:0:0:0", "unspecified"],
    ["0:0:0:0:ffff:0:7f00:1", "reserved"],
    ["0064:FF9B:0000::0A00:0001", "reserved"],
    ["2001:0DB8::1", "reserved"],
    ["FEC0::1", "reserved"],
    ["2606:4700:0000:0000:0000:0000:0000:1111", "public"],
  ])("%s is %s", (address, kind) => {
    expect(classifyAddress(address)).toBe(kind);
  });

  it("parses every spelling to the bytes WHATWG URL parsing gives", () => {
    for (const address of [
      "::FFFF:127.0.0.1",
      "0:0:0:0:0:ffff:7f00:1",
      "::ffff:0:7f00:1",
      "64:ff9b::10.0.0.1",
      "2001:0DB8:0:0::0001",
      "1:2:3:4:5:6:7:8",
      "1::",
      "::",
    ]) {
      const viaUrl = new URL(`http://[${address}]/`).hostname.slice(1, -1);
      expect(parseAddress(address)?.bytes, address).toEqual(parseAddress(viaUrl)?.bytes);
    }
  });

  it("refuses text that is no address", () => {
    for (const text of [
      "",
      "example.test",
      "127.1",
      "2130706433",
      "0x7f.0.0.1",
      "01.2.3.4",
      "1.2.3.4%eth0",
    ]) {
      expect(parseAddress(text), text).toBeNull();
      expect(classifyAddress(text), text).toBe("reserved");
    }
    for (const text of ["::ffff:1.2.3", "1:2:3:4:5:6:7:8:9", "::1::", "12345::", "g::1"]) {
      expect(parseAddress(text), text).toBeNull();
    }
  });

  it("canonical text: IPv4-mapped as the IPv4 address, IPv6 compressed, no zone", () => {
    expect(canonicalAddress("::FFFF:93.184.216.34")).toBe("93.184.216.34");
    expect(canonicalAddress("0:0:0:0:0:ffff:5db8:d822")).toBe("93.184.216.34");
    expect(canonicalAddress("2606:4700:0000:0000:0000:0000:0000:1111")).toBe("2606:4700::1111");
    expect(canonicalAddress("fe80::1%eth0")).toBe("fe80::1");
    expect(canonicalAddress("not an address")).toBeNull();
  });
});
