/**
 * The host's addresses as the watcher reads them (every interface, up or down) and as a proxy
 * re-reads them from the watcher's file: changes are seen within a second or two, and a file
 * that is missing, stale or malformed refuses everything.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, describe, expect, it } from "vitest";
import { canonicalAddress } from "./address-classes.ts";
import { addressChecker, type EgressRules } from "./decide.ts";
import {
  canonicalPrefixes,
  HOST_ADDRESSES_FILE,
  hostAddressFile,
  parseFibTrie,
  parseIfInet6,
  parseIpv6Route,
  readHostAddresses,
  watchHostAddresses,
  writeHostAddresses,
} from "./host-addresses.ts";

// /proc/net/fib_trie of a host with docker0 (no container: NO-CARRIER), an interface that is
// administratively down (rk-down, 11.22.33.44/32) and an AnyIP range in a custom table.
const FIB_TRIE = `Main:
  +-- 0.0.0.0/0 3 0 5
     |-- 0.0.0.0
        /0 universe UNICAST
     +-- 127.0.0.0/8 2 0 2
        +-- 127.0.0.0/31 1 0 0
           |-- 127.0.0.0
              /8 host LOCAL
           |-- 127.0.0.1
              /32 host LOCAL
        |-- 127.255.255.255
           /32 link BROADCAST
     |-- 11.22.33.44
        /32 host LOCAL
     +-- 172.17.0.0/16 2 0 2
        +-- 172.17.0.0/31 1 0 0
           |-- 172.17.0.0
              /16 link UNICAST
           |-- 172.17.0.1
              /32 host LOCAL
        |-- 172.17.255.255
           /32 link BROADCAST
     +-- 198.51.100.0/24 2 0 2
        |-- 198.51.100.0
           /24 link UNICAST
        |-- 198.51.100.7
           /32 host LOCAL
Local:
  +-- 0.0.0.0/0 3 0 4
     |-- 127.0.0.1
        /32 host LOCAL
Id 100:
  +-- 0.0.0.0/0 1 0 0
     |-- 5.6.7.0
        /24 host LOCAL
        /16 universe UNICAST
`;

const IF_INET6 = `fd000000000000000000000000000002 04 40 00 82     eth0
fe8000000000000000fc00fffe000001 04 40 20 80     eth0
20014860dead00000000000000000001 0b 80 00 c0 rk-down
00000000000000000000000000000001 01 80 10 80       lo
`;

const IPV6_ROUTE = `fd000000000000000000000000000000 40 00000000000000000000000000000000 00 00000000000000000000000000000000 00000100 00000001 00000000 00000001     eth0
00000000000000000000000000000001 80 00000000000000000000000000000000 00 00000000000000000000000000000000 00000000 00000002 00000000 80200001       lo
fd000000000000000000000000000000 80 00000000000000000000000000000000 00 00000000000000000000000000000000 00000000 00000002 00000000 00100001     eth0
2a0100000000000000000000000000000 30 00000000000000000000000000000000 00 00000000000000000000000000000000 00000000 00000002 00000000 80200001       lo
2a010000000000000000000000000000 30 00000000000000000000000000000000 00 00000000000000000000000000000000 00000000 00000002 00000000 80200001       lo
00000000000000000000000000000000 00 00000000000000000000000000000000 00 00000000000000000000000000000000 ffffffff 00000001 00000000 00200200       lo
`;

const dirs: string[] = [];
const tempDir = (): string => {
  const dir = mkdtempSync(join(tmpdir(), "host-addresses-"));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe("reading the host's addresses", () => {
  it("fib_trie: local and broadcast routes of every table, down interfaces included", () => {
    expect(canonicalPrefixes(parseFibTrie(FIB_TRIE))).toEqual(
      canonicalPrefixes([
        "127.0.0.0/8",
        "127.0.0.1/32",
        "127.255.255.255/32",
        "11.22.33.44/32",
        "172.17.0.1/32",
        "172.17.255.255/32",
        "198.51.100.7/32",
        "5.6.7.0/24",
      ]),
    );
  });

  it("if_inet6 and ipv6_route: every configured address, and local and anycast routes", () => {
    expect(parseIfInet6(IF_INET6)).toEqual([
      "fd00:0000:0000:0000:0000:0000:0000:0002/128",
      "fe80:0000:0000:0000:00fc:00ff:fe00:0001/128",
      "2001:4860:dead:0000:0000:0000:0000:0001/128",
      "0000:0000:0000:0000:0000:0000:0000:0001/128",
    ]);
    expect(canonicalPrefixes(parseIpv6Route(IPV6_ROUTE))).toEqual(["2a01::/48", "::1/128", "fd00::/128"]);
  });

  it("adds what os.networkInterfaces lists and survives /proc files it cannot read", () => {
    const files: Record<string, string> = { "/proc/net/fib_trie": FIB_TRIE };
    const read = (path: string): string => {
      const text = files[path];
      if (text === undefined) throw new Error("ENOENT");
      return text;
    };
    const interfaces = () => ({
      eth0: [
        {
          address: "203.0.113.9",
          netmask: "",
          family: "IPv4" as const,
          mac: "",
          internal: false,
          cidr: null,
        },
        {
          address: "fe80::1%eth0",
          netmask: "",
          family: "IPv6" as const,
          mac: "",
          internal: false,
          cidr: null,
          scopeid: 2,
        },
      ],
    });
    const found = readHostAddresses(read, interfaces);
    expect(found).toContain("11.22.33.44/32");
    expect(found).toContain("172.17.0.1/32");
    expect(found).toContain("203.0.113.9/32");
    expect(found).toContain("fe80::1/128");
    expect(found).toEqual(canonicalPrefixes(found));
  });

  it("on this machine: every address `ip addr` lists, up or down (docker0 with no container too)", () => {
    let listed: { ifname: string; operstate: string; addr_info: { local: string }[] }[];
    try {
      listed = JSON.parse(execFileSync("ip", ["-j", "addr"], { encoding: "utf8" }));
    } catch {
      console.log("host-addresses: no `ip -j addr` here; skipped");
      return;
    }
    const found = new Set(readHostAddresses());
    const down = listed.filter((link) => link.operstate !== "UP" && link.addr_info.length > 0);
    console.log(`host-addresses: ${found.size} prefixes; down with addresses: ${down.map((l) => l.ifname)}`);
    for (const link of listed) {
      for (const { local } of link.addr_info) {
        const family = local.includes(":") ? 128 : 32;
        expect(found, `${link.ifname} ${local}`).toContain(`${canonicalAddress(local)}/${family}`);
      }
    }
  });
});

describe("the watcher's file, as a proxy reads it", () => {
  const rules: EgressRules = { mode: "egress", allow: [], privateAllow: [], hostDeny: [] };

  it("a proxy refuses an address the host gains after it started, within a couple of seconds", async () => {
    const dir = tempDir();
    let addresses = ["127.0.0.1/32", "192.0.2.2/32"];
    const watcher = watchHostAddresses({ dir, read: () => addresses, intervalMs: 50 });
    try {
      const checker = addressChecker(
        rules,
        hostAddressFile(join(dir, HOST_ADDRESSES_FILE), { recheckMs: 50 }),
      );
      expect(checker.check("11.22.33.44")).toBeNull();
      addresses = [...addresses, "11.22.33.44/32", "2001:4860:dead::1/128"];
      const started = Date.now();
      while (checker.check("11.22.33.44") === null && Date.now() - started < 3_000) await sleep(20);
      expect(checker.check("11.22.33.44")).toBe("address_host");
      expect(checker.check("::ffff:11.22.33.44")).toBe("address_host");
      expect(checker.check("2001:4860:DEAD:0::1")).toBe("address_host");
      console.log(`host-addresses: refused ${Date.now() - started} ms after the host gained it`);
      addresses = addresses.filter((cidr) => !cidr.startsWith("11."));
      while (checker.check("11.22.33.44") !== null && Date.now() - started < 6_000) await sleep(20);
      expect(checker.check("11.22.33.44"), "an address the host lost is public again").toBeNull();
    } finally {
      watcher.stop();
    }
  });

  it("rewrites the file only when the addresses change, and touches it in between", async () => {
    const dir = tempDir();
    const file = join(dir, HOST_ADDRESSES_FILE);
    const watcher = watchHostAddresses({ dir, read: () => ["10.0.0.1/32"], intervalMs: 20, heartbeatMs: 60 });
    try {
      const before = readFileSync(file, "utf8");
      utimesSync(file, 0, 0);
      await sleep(200);
      expect(readFileSync(file, "utf8")).toBe(before);
      expect(hostAddressFile(file, { maxAgeMs: 1_000 })(), "touched again, so fresh").not.toBeNull();
    } finally {
      watcher.stop();
    }
  });

  it("refuses everything while the file is missing, stale or malformed", () => {
    const dir = tempDir();
    const file = join(dir, HOST_ADDRESSES_FILE);
    let now = Date.now();
    const clock = () => now;
    /** The file as written at the fake clock's time. */
    const write = (text: string): void => {
      writeFileSync(file, text);
      utimesSync(file, now / 1000, now / 1000);
    };
    expect(hostAddressFile(file, { now: clock })()).toBeNull();
    const source = hostAddressFile(file, { now: clock, maxAgeMs: 30_000, recheckMs: 1_000 });
    write(JSON.stringify({ addresses: ["11.22.33.44/32"] }));
    now += 1_000;
    expect(source()?.length).toBe(1);
    const checker = addressChecker(rules, source);
    expect(checker.check("93.184.216.34")).toBeNull();
    // The watcher stopped: nobody touches the file any more.
    now += 31_000;
    expect(source()).toBeNull();
    expect(checker.check("93.184.216.34")).toBe("host_addresses_unknown");
    write(JSON.stringify({ addresses: ["11.22.33.44/32"] }));
    now += 1_000;
    expect(checker.check("93.184.216.34"), "touched again").toBeNull();
    write("{ not json");
    now += 1_000;
    expect(source()).toBeNull();
    write(JSON.stringify({ nothing: [] }));
    now += 1_000;
    expect(source()).toBeNull();
    write(JSON.stringify({ addresses: ["11.22.33.44/32"] }));
    now += 1_000;
    expect(checker.check("11.22.33.44")).toBe("address_host");
    expect(checker.check("93.184.216.34")).toBeNull();
  });

  it("looks at the file at most once per recheck interval", () => {
    const dir = tempDir();
    const file = join(dir, HOST_ADDRESSES_FILE);
    writeHostAddresses(dir, []);
    let now = Date.now();
    const source = hostAddressFile(file, { now: () => now, recheckMs: 1_000 });
    expect(source()).toEqual([]);
    writeHostAddresses(dir, ["11.22.33.44/32"]);
    now += 500;
    expect(source(), "within the interval: the cached list").toEqual([]);
    now += 600;
    expect(source()?.length).toBe(1);
  });
});
