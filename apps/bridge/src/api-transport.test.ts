// The bridge's transport to the API: what a tool call sends arrives whole, the answer comes back
// with its status and body, consecutive calls share one kept-alive connection, and each call
// goes to its own URL's server.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keptAlivePost } from "./api-transport.ts";

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

const JSON_HEADERS = { "content-type": "application/json", authorization: "Bearer rext_x" };

describe("keptAlivePost", () => {
  it("sends the method, headers and body, and returns the status and body", async () => {
    const post = keptAlivePost();
    const body = JSON.stringify({ computerId: "cmp_1", argv: ["echo", "ü"] });
    const answer = await post(`${base}/rpc/external/computer/exec`, JSON_HEADERS, body);
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({ result: { ok: "é" } });
    const got = seen.at(-1);
    expect(got).toMatchObject({ method: "POST", url: "/rpc/external/computer/exec", body });
    expect(got?.headers).toMatchObject({
      authorization: "Bearer rext_x",
      "content-type": "application/json",
      "content-length": String(Buffer.byteLength(body)),
    });

    const refused = await post(`${base}/rpc/refused`, {}, "{}");
    expect(refused.status).toBe(404);
    expect(JSON.parse(refused.body)).toEqual({ error: { code: "NOT_FOUND", message: "no" } });
  });

  it("keeps one connection for consecutive calls", async () => {
    const post = keptAlivePost();
    const before = connections;
    for (let i = 0; i < 5; i++) {
      const answer = await post(`${base}/rpc/x`, {}, "{}");
      expect(answer.status).toBe(200);
    }
    expect(connections - before).toBe(1);
  });

  it("sends each call to its own URL's server, however often the URLs repeat", async () => {
    const other = http.createServer((req, res) => {
      req.resume();
      req.on("end", () => res.end(JSON.stringify({ result: { server: "other", url: req.url } })));
    });
    await new Promise<void>((resolve) => other.listen(0, "127.0.0.1", resolve));
    const otherBase = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
    try {
      const post = keptAlivePost();
      for (let i = 0; i < 3; i++) {
        expect(JSON.parse((await post(`${base}/rpc/a`, {}, "{}")).body)).toEqual({ result: { ok: "é" } });
        expect(seen.at(-1)?.url).toBe("/rpc/a");
        expect(JSON.parse((await post(`${otherBase}/rpc/b`, {}, "{}")).body)).toEqual({
          result: { server: "other", url: "/rpc/b" },
        });
      }
    } finally {
      other.closeAllConnections();
      await new Promise((resolve) => other.close(resolve));
    }
  });

  it("rejects when nothing listens", async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    await expect(keptAlivePost()(`http://127.0.0.1:${port}/rpc/x`, {}, "{}")).rejects.toThrow(/ECONNREFUSED/);
  });
});
