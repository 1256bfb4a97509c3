import { once } from "node:events";
import type { Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { connect } from "node:net";
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import { afterEach, describe, expect, it } from "vitest";
import { allowHosts, bodyTooLarge, hostnameOf, isBodyTooLarge, limitBody, requireJsonBody } from "./index.ts";

const MiB = 1024 * 1024;
let server: Server | undefined;
/** Bytes the server process read from each accepted socket. */
const serverSockets: Socket[] = [];

afterEach(async () => {
  const open = server;
  server = undefined;
  if (open) {
    open.closeAllConnections();
    await new Promise((done) => open.close(done));
  }
  serverSockets.length = 0;
});

async function listen(app: Hono): Promise<number> {
  server = await new Promise<Server>((ready) => {
    const s = serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0 }, () => ready(s as Server));
  });
  server.on("connection", (socket: Socket) => serverSockets.push(socket));
  return (server.address() as AddressInfo).port;
}

/** Sends `head`, then writes `chunk` (chunked framing when asked) until the response starts. */
async function sendUntilAnswered(
  port: number,
  head: string,
  options: { chunked: boolean; chunk: Buffer; maxBytes: number },
): Promise<{ status: number; sent: number }> {
  const socket = connect(port, "127.0.0.1");
  await once(socket, "connect");
  socket.write(head);
  let answer = "";
  let sent = 0;
  let answered = false;
  const status = new Promise<number>((resolve, reject) => {
    socket.on("data", (d: Buffer) => {
      answer += d.toString("latin1");
      const match = /^HTTP\/1\.1 (\d{3})/.exec(answer);
      if (match) {
        answered = true;
        resolve(Number(match[1]));
      }
    });
    socket.on("error", (e) => (answered ? undefined : reject(e)));
  });
  while (!answered && sent < options.maxBytes) {
    const frame = options.chunked
      ? Buffer.concat([
          Buffer.from(`${options.chunk.length.toString(16)}\r\n`),
          options.chunk,
          Buffer.from("\r\n"),
        ])
      : options.chunk;
    sent += options.chunk.length;
    if (!socket.write(frame)) await Promise.race([once(socket, "drain"), status, sleep(50)]);
  }
  const code = await status;
  socket.destroy();
  return { status: code, sent };
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

describe("limitBody", () => {
  it("refuses a declared length over the limit from the headers, before any body byte", async () => {
    const app = new Hono();
    app.use(limitBody(() => 4096));
    app.post("/x", async (c) => c.text(await c.req.text()));
    const port = await listen(app);
    const head = `POST /x HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: ${64 * MiB}\r\n\r\n`;
    const socket = connect(port, "127.0.0.1");
    await once(socket, "connect");
    socket.write(head);
    const [data] = (await once(socket, "data")) as [Buffer];
    // Answered with no body byte sent at all.
    expect(data.toString()).toMatch(/^HTTP\/1\.1 413/);
    expect(data.toString()).toContain('"code":"BODY_TOO_LARGE"');
    socket.destroy();
  });

  it("never reads a chunked body the handler does not read", async () => {
    const app = new Hono();
    app.use(limitBody(() => 16 * MiB));
    // Like an RPC with a refused token: answers without touching the body, after a while.
    app.post("/x", async (c) => {
      await sleep(400);
      return c.text("no", 401);
    });
    const port = await listen(app);
    const head = "POST /x HTTP/1.1\r\nhost: 127.0.0.1\r\ntransfer-encoding: chunked\r\n\r\n";
    const { status } = await sendUntilAnswered(port, head, {
      chunked: true,
      chunk: Buffer.alloc(64 * 1024, 1),
      maxBytes: 12 * MiB,
    });
    expect(status).toBe(401);
    const read = Math.max(...serverSockets.map((s) => s.bytesRead));
    // Node's own read-ahead only (tens of KiB): the body was never pulled.
    expect(read).toBeLessThan(1 * MiB);
  });

  it("counts a chunked body as it is read and stops at the limit", async () => {
    const app = new Hono();
    app.use(limitBody(() => 1 * MiB));
    app.onError((error, c) => (isBodyTooLarge(error) ? bodyTooLarge(1 * MiB) : c.text("bug", 500)));
    app.post("/x", async (c) => c.text(String((await c.req.text()).length)));
    const port = await listen(app);
    const head = "POST /x HTTP/1.1\r\nhost: 127.0.0.1\r\ntransfer-encoding: chunked\r\n\r\n";
    const { status, sent } = await sendUntilAnswered(port, head, {
      chunked: true,
      chunk: Buffer.alloc(64 * 1024, 1),
      maxBytes: 32 * MiB,
    });
    expect(status).toBe(413);
    expect(sent).toBeLessThan(32 * MiB);
  });

  it("passes a body within the limit, chunked or not", async () => {
    const app = new Hono();
    app.use(limitBody(() => 1 * MiB));
    app.post("/x", async (c) => c.text(String((await c.req.text()).length)));
    const port = await listen(app);
    const body = "a".repeat(512 * 1024);
    const plain = await fetch(`http://127.0.0.1:${port}/x`, { method: "POST", body });
    expect(await plain.text()).toBe(String(body.length));
    const streamed = await fetch(`http://127.0.0.1:${port}/x`, {
      method: "POST",
      body: new Blob([body]).stream(),
      duplex: "half",
    } as RequestInit);
    expect(await streamed.text()).toBe(String(body.length));
  });
});

describe("allowHosts", () => {
  it("serves loopback names and the configured ones, refuses any other Host", async () => {
    const app = new Hono();
    app.use(allowHosts(["rakazo.example", "api"]));
    app.get("/", (c) => c.text("ok"));
    const status = async (host: string) => (await app.request("/", { headers: { host } })).status;
    for (const host of [
      "127.0.0.1:8787",
      "localhost",
      "[::1]:1",
      "rakazo.example",
      "RAKAZO.example.:443",
      "api:8787",
      "a.localhost",
    ]) {
      expect(await status(host), host).toBe(200);
    }
    for (const host of ["evil.example", "rakazo.example.evil", "127.0.0.1.nip.io", "", "api@evil", "[::2]"]) {
      expect(await status(host), host).toBe(421);
    }
    expect(hostnameOf("[::1]:80")).toBe("::1");
  });
});

describe("requireJsonBody", () => {
  it("refuses a body not declared JSON, passes JSON and body-less requests", async () => {
    const app = new Hono();
    app.use(requireJsonBody());
    app.post("/x", (c) => c.text("ok"));
    const post = async (headers: Record<string, string>, body?: string) =>
      (await app.request("/x", { method: "POST", headers, ...(body !== undefined ? { body } : {}) })).status;
    expect(await post({ "content-type": "text/plain" }, "{}")).toBe(415);
    expect(await post({ "content-type": "application/x-www-form-urlencoded" }, "a=1")).toBe(415);
    expect(await post({}, "{}")).toBe(415);
    expect(await post({ "content-type": "application/json; charset=utf-8" }, "{}")).toBe(200);
    expect(await post({ "content-type": "application/merge-patch+json" }, "{}")).toBe(200);
    expect(await post({})).toBe(200);
  });
});
