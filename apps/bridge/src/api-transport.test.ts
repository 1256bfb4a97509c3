// The bridge's transport to the API: what a tool call sends arrives whole, the answer comes back
// with its status and body, and consecutive calls share one kept-alive connection.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keptAliveFetch } from "./api-transport.ts";

let server: http.Server;
let base: string;
let connections = 0;
const seen: { method?: string; url?: string; headers: http.IncomingHttpHeaders; body: string }[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      seen.push({
        method: req.method,
        url: req.url,
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      });
      const refused = req.url === "/rpc/refused";
      res.writeHead(refused ? 404 : 200, { "content-type": "application/json" });
      res.end(
        JSON.stringify(refused ? { error: { code: "NOT_FOUND", message: "no" } } : { result: { ok: "é" } }),
      );
    });
  });
  server.on("connection", () => {
    connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe("keptAliveFetch", () => {
  it("sends the method, headers and body, and returns the status and body", async () => {
    const send = keptAliveFetch();
    const body = JSON.stringify({ computerId: "cmp_1", argv: ["echo", "ü"] });
    const response = await send(
      new Request(`${base}/rpc/external/computer/exec`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: "Bearer rext_x" },
        body,
      }),
    );
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ result: { ok: "é" } });
    const got = seen.at(-1);
    expect(got).toMatchObject({ method: "POST", url: "/rpc/external/computer/exec", body });
    expect(got?.headers).toMatchObject({
      authorization: "Bearer rext_x",
      "content-type": "application/json",
      "content-length": String(Buffer.byteLength(body)),
    });

    const refused = await send(new Request(`${base}/rpc/refused`, { method: "POST", body: "{}" }));
    expect(refused.status).toBe(404);
    expect(await refused.json()).toEqual({ error: { code: "NOT_FOUND", message: "no" } });
  });

  it("keeps one connection for consecutive calls", async () => {
    const send = keptAliveFetch();
    const before = connections;
    for (let i = 0; i < 5; i++) {
      const response = await send(new Request(`${base}/rpc/x`, { method: "POST", body: "{}" }));
      expect(response.status).toBe(200);
      await response.arrayBuffer();
    }
    expect(connections - before).toBe(1);
  });

  it("rejects when nothing listens", async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const send = keptAliveFetch();
    await expect(
      send(new Request(`http://127.0.0.1:${port}/rpc/x`, { method: "POST", body: "{}" })),
    ).rejects.toThrow(/ECONNREFUSED/);
  });
});
