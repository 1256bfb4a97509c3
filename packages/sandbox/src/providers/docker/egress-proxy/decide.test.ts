/** The egress proxy's allow/deny decisions, without sockets. */
import { describe, expect, it } from "vitest";
import type { Prefix } from "./address-classes.ts";
import {
  addressChecker,
  decideTarget,
  type EgressRules,
  parseAuthority,
  permittedAddresses,
  prefixList,
} from "./decide.ts";

const allowlist: EgressRules = {
  mode: "allowlist",
  allow: [
    { host: "allowed.test" },
    { host: "*.docs.test", ports: [8443] },
    { host: "93.184.216.34", ports: [80] },
  ],
  privateAllow: [],
  hostDeny: [],
};

describe("decideTarget", () => {
  it("allowlist: listed hosts on their ports only", () => {
    expect(decideTarget(allowlist, "allowed.test", 443)).toBeNull();
    expect(decideTarget(allowlist, "ALLOWED.test.", 80)).toBeNull();
    expect(decideTarget(allowlist, "allowed.test", 22)).toBe("port_not_allowed");
    expect(decideTarget(allowlist, "other.test", 443)).toBe("host_not_allowed");
    expect(decideTarget(allowlist, "evil-allowed.test", 443)).toBe("host_not_allowed");
    expect(decideTarget(allowlist, "allowed.test.evil.test", 443)).toBe("host_not_allowed");
  });

  it("allowlist: a wildcard covers subdomains, not the bare domain", () => {
    expect(decideTarget(allowlist, "api.docs.test", 8443)).toBeNull();
    expect(decideTarget(allowlist, "a.b.docs.test", 8443)).toBeNull();
    expect(decideTarget(allowlist, "docs.test", 8443)).toBe("host_not_allowed");
    expect(decideTarget(allowlist, "xdocs.test", 8443)).toBe("host_not_allowed");
  });

  it("allowlist: IP literals match only themselves", () => {
    expect(decideTarget(allowlist, "93.184.216.34", 80)).toBeNull();
    expect(decideTarget(allowlist, "93.184.216.35", 80)).toBe("host_not_allowed");
  });

  it("egress: any well-formed target passes the name check", () => {
    const egress: EgressRules = { ...allowlist, mode: "egress", allow: [] };
    expect(decideTarget(egress, "anything.test", 5432)).toBeNull();
    expect(decideTarget(egress, "anything.test", 0)).toBe("bad_target");
    expect(decideTarget(egress, "", 80)).toBe("bad_target");
  });
});

describe("addressChecker", () => {
  const rules: EgressRules = {
    mode: "egress",
    allow: [],
    privateAllow: ["172.30.0.0/16"],
    hostDeny: ["172.30.0.1", "192.168.5.10"],
  };
  const checker = addressChecker(rules);

  it("refuses loopback, link-local, metadata and unspecified whatever the deployment allows", () => {
    const open = addressChecker({ ...rules, privateAllow: ["0.0.0.0/0", "169.254.0.0/16", "127.0.0.0/8"] });
    for (const address of ["127.0.0.1", "169.254.169.254", "0.0.0.0", "::1", "fe80::1", "::ffff:127.0.0.1"]) {
      expect(open.check(address), address).toBe("address_forbidden");
    }
  });

  it("refuses private ranges unless the deployment lists them", () => {
    expect(checker.check("10.0.0.5")).toBe("address_private");
    expect(checker.check("172.17.0.1")).toBe("address_private");
    expect(checker.check("172.30.0.7")).toBeNull();
    expect(checker.check("::ffff:172.30.0.7")).toBeNull();
    expect(checker.check("0:0:0:0:0:FFFF:AC1E:0007")).toBeNull();
  });

  it("opens IPv6 and IPv4-mapped private ranges the deployment lists, and nothing else", () => {
    const v6 = addressChecker({ ...rules, privateAllow: ["fd00:1::/32", "::ffff:10.9.0.0/112"] });
    expect(v6.check("fd00:1::5")).toBeNull();
    expect(v6.check("FD00:0001:0000::5")).toBeNull();
    expect(v6.check("fd00:2::5")).toBe("address_private");
    expect(v6.check("10.9.3.4")).toBeNull();
    expect(v6.check("10.10.3.4")).toBe("address_private");
    // A listed range that is not private opens nothing.
    const wide = addressChecker({ ...rules, privateAllow: ["::/0", "0.0.0.0/0", "fec0::/10", "2002::/16"] });
    expect(wide.check("fec0::1")).toBe("address_forbidden");
    expect(wide.check("2002:a00:1::1")).toBe("address_forbidden");
    expect(wide.check("10.0.0.1")).toBeNull();
  });

  it("refuses every IPv6 form that carries a private or loopback IPv4 address, even in an opened range", () => {
    const open = addressChecker({ ...rules, privateAllow: ["10.0.0.0/8", "127.0.0.0/8"] });
    for (const address of [
      "::a00:1",
      "::10.0.0.1",
      "::ffff:0:a00:1",
      "64:ff9b::a00:1",
      "64:ff9b::10.0.0.1",
      "64:ff9b:1::a00:1",
      "2002:a00:1::1",
      "2001:0:a00:1::1",
      "::7f00:1",
      "::ffff:0:7f00:1",
    ]) {
      expect(open.check(address), address).toBe("address_forbidden");
    }
    expect(open.check("::ffff:10.0.0.1")).toBeNull();
  });

  it("refuses the host's own addresses even inside an allowed range", () => {
    expect(checker.check("172.30.0.1")).toBe("address_host");
    expect(checker.check("::ffff:172.30.0.1")).toBe("address_host");
    expect(checker.check("::FFFF:AC1E:1")).toBe("address_host");
    expect(checker.check("192.168.5.10")).toBe("address_host");
  });

  it("refuses the host's current addresses as the source reports them, and everything while unknown", () => {
    let current: readonly Prefix[] | null = [];
    const live = addressChecker(rules, () => current);
    expect(live.check("11.22.33.44")).toBeNull();
    current = prefixList(["11.22.33.44/32", "2001:4860:dead::/48"]);
    expect(live.check("11.22.33.44")).toBe("address_host");
    expect(live.check("::ffff:11.22.33.44")).toBe("address_host");
    expect(live.check("2001:4860:dead:0::7")).toBe("address_host");
    expect(live.check("2001:4860:beef::7")).toBeNull();
    current = null;
    expect(live.check("93.184.216.34")).toBe("host_addresses_unknown");
  });

  it("keeps only checked addresses of a name (a rebinding answer gets nowhere)", () => {
    expect(permittedAddresses(checker, ["169.254.169.254", "93.184.216.34"])).toEqual({
      addresses: ["93.184.216.34"],
      denial: null,
    });
    expect(permittedAddresses(checker, ["127.0.0.1", "10.0.0.1"])).toEqual({
      addresses: [],
      denial: "address_forbidden",
    });
    expect(permittedAddresses(checker, [])).toEqual({ addresses: [], denial: "unresolved" });
  });

  it("hands out the checked bytes in one spelling, never the resolver's text", () => {
    expect(permittedAddresses(checker, ["::FFFF:93.184.216.34", "2606:4700:0:0:0:0:0:1111"])).toEqual({
      addresses: ["93.184.216.34", "2606:4700::1111"],
      denial: null,
    });
  });
});

describe("parseAuthority", () => {
  it("reads host:port and [v6]:port, refuses the rest", () => {
    expect(parseAuthority("example.test:443")).toEqual({ host: "example.test", port: 443 });
    expect(parseAuthority("[::1]:8443")).toEqual({ host: "::1", port: 8443 });
    expect(parseAuthority("example.test")).toBeNull();
    expect(parseAuthority("a:b:443")).toBeNull();
  });
});
