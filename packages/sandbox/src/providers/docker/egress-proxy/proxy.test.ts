/**
 * The egress proxy over real sockets (a Unix socket in, loopback fixtures out). The
 * upstream `connect` maps the checked public address onto a loopback fixture, so no packet
 * leaves this machine and the test sees which address the proxy dialled.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, request, type Server } from "node:http";
import { type AddressInfo, connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EgressRules, HostDenySource } from "./decide.ts";
import { HOST_ADDRESSES_FILE, hostAddressFile, watchHostAddresses } from "./host-addresses.ts";
import { createEgressProxy } from "./proxy.ts";

const PUBLIC = "93.184.216.34";
const names: Record<string, string[]> = {
  "allowed.test": [PUBLIC],
  "other.test": [PUBLIC],
  "rebind.test": ["169.254.169.254", "127.0.0.1"],
  "private.test": ["10.0.0.8"],
};

let fixture: Server;
let fixturePort = 0;
const dialled: string[] = [];
const dir = mkdtempSync(join(tmpdir(), "egress-proxy-"));
const servers: Server[] = [];

function startProxy(rules: EgressRules, hostAddresses?: HostDenySource): Promise<string> {
  const socket = join(dir, `${rules.mode}-${servers.length}.sock`);
  const proxy = createEgressProxy({
    rules,
    ...(hostAddresses ? { hostAddresses } : {}),
    resolve: async (host) => {
      const found = names[host];
      if (!found) throw new Error("ENOTFOUND");
      return found;
    },
    connect: (address, port): Socket => {
      dialled.push(`${address}:${port}`);
      return connect({ host: "127.0.0.1", port: fixturePort });
    },
  });
  servers.push(proxy);
  return new Promise((resolve) => proxy.listen(socket, () => resolve(socket)));
}

/** A CONNECT through the proxy, then one HTTP request in the tunnel. */
function viaConnect(socketPath: string, authority: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, method: "CONNECT", path: authority });
    req.on("connect", (res, tunnel) => {
      if (res.statusCode !== 200) {
        tunnel.destroy();
        resolve({ status: res.statusCode ?? 0, body: String(res.headers["x-rakazo-egress"] ?? "") });
        return;
      }
      const inner = request(
        { createConnection: () => tunnel, path: "/", headers: { host: authority } },
        (answer) => {
          let body = "";
          answer.on("data", (chunk) => (body += chunk));
          answer.on("end", () => resolve({ status: answer.statusCode ?? 0, body }));
        },
      );
      inner.on("error", reject);
      inner.end();
    });
    req.on("error", reject);
    req.end();
  });
}

function viaForward(socketPath: string, url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, path: url, headers: { host: new URL(url).host } }, (res) => {
      let body = "";
      res.on("data", (chunk) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

beforeAll(async () => {
  fixture = createServer((req, res) => res.end(`fixture saw host=${req.headers.host} path=${req.url}`));
  await new Promise<void>((resolve) => fixture.listen(0, "127.0.0.1", resolve));
  fixturePort = (fixture.address() as AddressInfo).port;
});

afterAll(() => {
  fixture.close();
  for (const server of servers) server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("egress proxy (allowlist)", () => {
  const rules: EgressRules = {
    mode: "allowlist",
    allow: [
      { host: "allowed.test", ports: [443, 80] },
      { host: "rebind.test" },
      { host: "private.test" },
      { host: "169.254.169.254" },
    ],
    privateAllow: [],
    hostDeny: [],
  };

  it("tunnels to a listed host, dialling only the checked address", async () => {
    const socket = await startProxy(rules);
    dialled.length = 0;
    const answer = await viaConnect(socket, "allowed.test:443");
    expect(answer).toEqual({ status: 200, body: "fixture saw host=allowed.test:443 path=/" });
    expect(dialled).toEqual([`${PUBLIC}:443`]);
  });

  it("forwards plain HTTP to a listed host with its Host header", async () => {
    const socket = await startProxy(rules);
    const answer = await viaForward(socket, "http://allowed.test/page?q=1");
    expect(answer).toEqual({ status: 200, body: "fixture saw host=allowed.test path=/page?q=1" });
  });

  it("refuses an unlisted host, a listed host on another port, and never dials", async () => {
    const socket = await startProxy(rules);
    dialled.length = 0;
    expect(await viaConnect(socket, "other.test:443")).toEqual({ status: 403, body: "host_not_allowed" });
    expect(await viaConnect(socket, "allowed.test:5432")).toEqual({ status: 403, body: "port_not_allowed" });
    expect((await viaForward(socket, "http://other.test/")).status).toBe(403);
    expect(dialled).toEqual([]);
  });

  it("refuses a listed name that resolves to loopback/metadata or a private range", async () => {
    const socket = await startProxy(rules);
    dialled.length = 0;
    expect(await viaConnect(socket, "rebind.test:443")).toEqual({ status: 403, body: "address_forbidden" });
    expect(await viaConnect(socket, "private.test:443")).toEqual({ status: 403, body: "address_private" });
    expect(await viaConnect(socket, "169.254.169.254:80")).toEqual({
      status: 403,
      body: "address_forbidden",
    });
    expect((await viaForward(socket, "http://169.254.169.254/latest/meta-data/")).status).toBe(403);
    expect(dialled).toEqual([]);
  });
});

describe("egress proxy (egress)", () => {
  it("passes public destinations on any port, refuses the host, private and metadata", async () => {
    const socket = await startProxy({ mode: "egress", allow: [], privateAllow: [], hostDeny: [PUBLIC] });
    dialled.length = 0;
    expect(await viaConnect(socket, "other.test:443")).toEqual({ status: 403, body: "address_host" });
    const open = await startProxy({ mode: "egress", allow: [], privateAllow: [], hostDeny: [] });
    expect((await viaConnect(open, "other.test:8080")).status).toBe(200);
    expect(await viaConnect(open, "127.0.0.1:5432")).toEqual({ status: 403, body: "address_forbidden" });
    expect(await viaConnect(open, "[::1]:5432")).toEqual({ status: 403, body: "address_forbidden" });
    expect(await viaConnect(open, "private.test:80")).toEqual({ status: 403, body: "address_private" });
    expect(await viaConnect(open, "nowhere.test:80")).toEqual({ status: 403, body: "unresolved" });
    expect(dialled).toEqual([`${PUBLIC}:8080`]);
  });
});

describe("egress proxy and the host's changing addresses", () => {
  it("refuses an address the host gained after the proxy started, and every address while they are unknown", async () => {
    const watched = join(dir, "host-addresses");
    mkdirSync(watched);
    let hostHas = ["127.0.0.1/32"];
    const watcher = watchHostAddresses({ dir: watched, read: () => hostHas, intervalMs: 50 });
    const file = join(watched, HOST_ADDRESSES_FILE);
    try {
      const socket = await startProxy(
        { mode: "egress", allow: [], privateAllow: [], hostDeny: [] },
        hostAddressFile(file, { recheckMs: 50 }),
      );
      dialled.length = 0;
      expect((await viaConnect(socket, "11.22.33.44:443")).status).toBe(200);
      expect(dialled).toEqual(["11.22.33.44:443"]);
      hostHas = [...hostHas, "11.22.33.44/32"];
      await sleep(300);
      dialled.length = 0;
      expect(await viaConnect(socket, "11.22.33.44:443")).toEqual({ status: 403, body: "address_host" });
      expect(await viaConnect(socket, "[::ffff:b16:212c]:443")).toEqual({
        status: 403,
        body: "address_host",
      });
      expect((await viaForward(socket, "http://11.22.33.44/")).status).toBe(403);
      expect(dialled).toEqual([]);
      watcher.stop();
      rmSync(file);
      await sleep(100);
      expect(await viaConnect(socket, "other.test:443")).toEqual({
        status: 403,
        body: "host_addresses_unknown",
      });
      expect(dialled).toEqual([]);
    } finally {
      watcher.stop();
    }
  });
});
