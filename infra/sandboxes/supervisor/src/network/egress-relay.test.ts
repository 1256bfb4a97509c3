/** The in-computer relay carries loopback connections to the egress proxy's socket. */
import { mkdtempSync, rmSync } from "node:fs";
import { type AddressInfo, connect, createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseRelayListen, startEgressRelay } from "./egress-relay.ts";

const dir = mkdtempSync(join(tmpdir(), "egress-relay-"));
const servers: Server[] = [];
afterAll(() => {
  for (const server of servers) server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("egress relay", () => {
  it("listens on loopback only", () => {
    expect(parseRelayListen("127.0.0.1:3128")).toEqual({ host: "127.0.0.1", port: 3128 });
    expect(() => parseRelayListen("0.0.0.0:3128")).toThrow(/loopback/);
  });

  it("relays bytes both ways to the Unix socket", async () => {
    const socket = join(dir, "proxy.sock");
    const upstream = createServer((conn) => conn.on("data", (data) => conn.end(`echo:${data}`)));
    servers.push(upstream);
    await new Promise<void>((resolve) => upstream.listen(socket, resolve));
    const relay = await startEgressRelay({ listen: "127.0.0.1:0", socket });
    servers.push(relay);
    const port = (relay.address() as AddressInfo).port;
    const answer = await new Promise<string>((resolve, reject) => {
      const client = connect({ host: "127.0.0.1", port }, () => client.write("hello"));
      let text = "";
      client.on("data", (chunk) => (text += chunk));
      client.on("end", () => resolve(text));
      client.on("error", reject);
    });
    expect(answer).toBe("echo:hello");
  });
});
