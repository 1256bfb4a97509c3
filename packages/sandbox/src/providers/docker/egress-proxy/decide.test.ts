/** Issue 16: the egress proxy's allow/deny decisions, without sockets. */
import { describe, expect, it } from "vitest";
import {
  addressChecker,
  classifyAddress,
  decideTarget,
  type EgressRules,
  parseAuthority,
  permittedAddresses,
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

describe("classifyAddress", () => {
  it.each([
    ["127.0.0.1", "loopback"],
    ["::1", "loopback"],
    ["169.254.169.254", "link-local"],
    ["::ffff:169.254.169.254", "link-local"],
    ["fe80::1", "link-local"],
    ["0.0.0.0", "unspecified"],
    ["::", "unspecified"],
    ["10.1.2.3", "private"],
    ["172.17.0.1", "private"],
    ["192.168.1.1", "private"],
    ["100.64.0.1", "private"],
    ["fd00::1", "private"],
    ["::ffff:10.0.0.1", "private"],
    ["224.0.0.1", "multicast"],
    ["64:ff9b::a9fe:a9fe", "reserved"],
    ["::127.0.0.1", "reserved"],
    ["93.184.216.34", "public"],
    ["2606:4700::1111", "public"],
  ])("%s is %s", (address, kind) => {
    expect(classifyAddress(address)).toBe(kind);
  });
});

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
  });

  it("refuses the host's own addresses even inside an allowed range", () => {
    expect(checker.check("172.30.0.1")).toBe("address_host");
    expect(checker.check("::ffff:172.30.0.1")).toBe("address_host");
    expect(checker.check("192.168.5.10")).toBe("address_host");
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
});

describe("parseAuthority", () => {
  it("reads host:port and [v6]:port, refuses the rest", () => {
    expect(parseAuthority("example.test:443")).toEqual({ host: "example.test", port: 443 });
    expect(parseAuthority("[::1]:8443")).toEqual({ host: "::1", port: 8443 });
    expect(parseAuthority("example.test")).toBeNull();
    expect(parseAuthority("a:b:443")).toBeNull();
  });
});
