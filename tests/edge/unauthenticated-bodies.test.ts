/**
 * Nothing is read before it is authorized, measured on the real API and web processes: a
 * stranger's body costs the server its headers, never its memory. Every route of both services
 * answers a 64 MiB declared body with 413 before a byte of it is sent; bodies blasted in full
 * and 32 chunked bodies streamed at once leave the processes' peak resident memory (VmHWM)
 * within a few MiB of where it was.
 */
import { once } from "node:events";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RPC_CONTRACTS } from "@rakazo/api-contract";
import { createTestDatabase, type TestDatabase } from "@rakazo/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Child, freePort, killHard, startChild } from "../support/processes.ts";
import { eventually } from "../support/system.ts";

const MiB = 1024 * 1024;
const SETUP_CODE = "edge-test-setup-code-0123456789";

async function peakKib(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  return Number(/^VmHWM:\s+(\d+) kB$/m.exec(status)?.[1] ?? Number.NaN);
}

async function listening(child: Child, message: string): Promise<void> {
  await eventually(async () => {
    if (child.process.exitCode !== null) throw new Error(`exited early:\n${child.output.join("")}`);
    return child.output.join("").includes(`"msg":"${message}"`) || undefined;
  }, 30_000);
}

interface Sent {
  readonly status: number;
  /** Body bytes this client had handed to its socket when the status line arrived. */
  readonly sentBeforeAnswer: number;
}

/**
 * POSTs `path` with `headers`, then writes up to `bodyBytes` (chunked framing when asked) as
 * fast as the socket takes it, until the server answers or closes.
 */
async function post(
  port: number,
  path: string,
  options: { bodyBytes: number; chunked?: boolean; declared?: number; sendBody?: boolean },
): Promise<Sent> {
  const socket: Socket = connect(port, "127.0.0.1");
  await once(socket, "connect");
  const framing = options.chunked
    ? "transfer-encoding: chunked"
    : `content-length: ${options.declared ?? options.bodyBytes}`;
  socket.write(
    `POST ${path} HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\n${framing}\r\n\r\n`,
  );
  let sent = 0;
  let answer = "";
  let closed = false;
  const status = new Promise<number>((resolve) => {
    socket.on("data", (d: Buffer) => {
      answer += d.toString("latin1");
      const match = /^HTTP\/1\.1 (\d{3})/.exec(answer);
      if (match) resolve(Number(match[1]));
    });
    const end = () => {
      closed = true;
      resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0));
    };
    socket.on("close", end);
    socket.on("error", end);
  });
  let answered: number | undefined;
  void status.then((s) => {
    answered = s;
  });
  const chunk = Buffer.alloc(256 * 1024, 0x61);
  const frame = options.chunked
    ? Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from("\r\n")])
    : chunk;
  let sentBeforeAnswer = 0;
  if (options.sendBody !== false) {
    while (answered === undefined && !closed && sent < options.bodyBytes) {
      sent += chunk.length;
      if (!socket.write(frame)) {
        await Promise.race([once(socket, "drain"), status, new Promise((done) => setTimeout(done, 100))]);
      }
    }
  }
  const code = await Promise.race([
    status,
    new Promise<number>((done) => setTimeout(() => done(-1), 20_000)),
  ]);
  sentBeforeAnswer = sent;
  socket.destroy();
  return { status: code, sentBeforeAnswer };
}

describe("a stranger's request body costs its headers, never the server's memory", () => {
  let database: TestDatabase;
  let dataDir: string;
  let api: Child;
  let web: Child;
  let bridge: Child;
  let apiPort: number;
  let webPort: number;
  let bridgePort: number;

  beforeAll(async () => {
    database = await createTestDatabase();
    dataDir = await mkdtemp(join(tmpdir(), "rakazo-edge-"));
    [apiPort, webPort, bridgePort] = [await freePort(), await freePort(), await freePort()];
    const serviceToken = `svc_${"x".repeat(40)}`;
    const shared = {
      LOG_LEVEL: "info",
      DATABASE_URL: database.url,
      DATA_DIR: dataDir,
      API_HOST: "127.0.0.1",
      API_PORT: String(apiPort),
      WEB_HOST: "127.0.0.1",
      WEB_PORT: String(webPort),
      SCREEN_SERVICE_TOKEN: serviceToken,
    };
    api = startChild("apps/api/src/main.ts", {
      ...shared,
      RAKAZO_PROVIDER: "fake",
      RAKAZO_SETUP_CODE: SETUP_CODE,
    });
    web = startChild("apps/web/src/main.ts", shared);
    bridge = startChild("apps/bridge/src/main.ts", {
      LOG_LEVEL: "info",
      BRIDGE_TOKEN: `brg_${"b".repeat(40)}`,
      RAKAZO_EXTERNAL_TOKEN: `ext_${"e".repeat(40)}`,
      RAKAZO_API_URL: `http://127.0.0.1:${apiPort}`,
      BRIDGE_HOST: "127.0.0.1",
      BRIDGE_PORT: String(bridgePort),
    });
    await Promise.all([
      listening(api, "api.listening"),
      listening(web, "web.listening"),
      listening(bridge, "bridge.listening"),
    ]);
  }, 60_000);

  afterAll(async () => {
    await Promise.all([api && killHard(api), web && killHard(web), bridge && killHard(bridge)]);
    await database?.drop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  const apiRoutes = [
    ...RPC_CONTRACTS.map((c) => `/rpc/${c.name}`),
    "/health",
    "/setup",
    "/openapi.json",
    "/internal/screens/authorize",
    "/activity/stream",
    "/nowhere",
  ];
  const webRoutes = [
    "/auth/signin",
    "/auth/bootstrap",
    "/auth/signout",
    "/auth/session",
    "/auth/setup",
    "/api/rpc/computer/get",
    "/api/rpc/computer/files/upload",
    "/api/activity/stream",
    "/",
    "/screens/rs1.k1.aaaaaaaaaaaaaaaaaaaaaaaa/",
    "/terminals/rs1.k1.aaaaaaaaaaaaaaaaaaaaaaaa/",
    "/embed/x",
    "/assets/screen.js",
    "/health",
    "/nowhere",
  ];

  const peaks = async () => ({
    api: await peakKib(api.process.pid as number),
    web: await peakKib(web.process.pid as number),
    bridge: await peakKib(bridge.process.pid as number),
  });

  const bridgeRoutes = ["/v1/computer_create", "/v1/file", "/mcp", "/health", "/nowhere"];

  it("answers a 64 MiB declared body with 413 on every API, web and bridge route, before any of it is sent", async () => {
    const refusals: string[] = [];
    for (const [service, port, routes] of [
      ["api", apiPort, apiRoutes],
      ["web", webPort, webRoutes],
      ["bridge", bridgePort, bridgeRoutes],
    ] as const) {
      for (const route of routes) {
        const { status } = await post(port, route, { bodyBytes: 0, declared: 64 * MiB, sendBody: false });
        if (status !== 413) refusals.push(`${service} ${route}: ${status}`);
      }
    }
    expect(refusals).toEqual([]);
  });

  it("64 MiB sent in full to the pre-sign-in and upload routes leave peak memory under +32 MiB", async () => {
    const before = await peaks();
    const results = await Promise.all([
      post(apiPort, "/rpc/setup/bootstrap", { bodyBytes: 64 * MiB }),
      post(apiPort, "/rpc/computer/files/upload", { bodyBytes: 64 * MiB }),
      post(apiPort, "/rpc/computer/list", { bodyBytes: 64 * MiB }),
      post(webPort, "/auth/signin", { bodyBytes: 64 * MiB }),
      post(webPort, "/auth/bootstrap", { bodyBytes: 64 * MiB }),
      post(webPort, "/api/rpc/computer/files/upload", { bodyBytes: 64 * MiB }),
      post(bridgePort, "/v1/file", { bodyBytes: 64 * MiB }),
      post(bridgePort, "/mcp", { bodyBytes: 64 * MiB }),
    ]);
    for (const r of results) {
      expect(r.status).toBe(413);
      // Answered while the client was still sending: the server never waited for the body.
      expect(r.sentBeforeAnswer).toBeLessThan(64 * MiB);
    }
    const after = await peaks();
    const growth = (name: keyof typeof after) => (after[name] - before[name]) / 1024;
    console.log(
      `64 MiB bodies: peak RSS growth api ${growth("api").toFixed(1)}, web ${growth("web").toFixed(1)}, bridge ${growth("bridge").toFixed(1)} MiB`,
    );
    for (const name of ["api", "web", "bridge"] as const) expect(growth(name), name).toBeLessThan(32);
  }, 60_000);

  it("32 chunked unauthenticated bodies streamed at once cost under 32 MiB in all", async () => {
    const before = await peaks();
    const streams = [
      ...Array.from({ length: 16 }, (_, i) =>
        post(apiPort, i % 2 ? "/rpc/computer/files/upload" : "/rpc/computer/list", {
          bodyBytes: 16 * MiB,
          chunked: true,
        }),
      ),
      ...Array.from({ length: 8 }, (_, i) =>
        post(bridgePort, i % 2 ? "/mcp" : "/v1/computer_exec", { bodyBytes: 16 * MiB, chunked: true }),
      ),
      ...Array.from({ length: 8 }, (_, i) =>
        post(webPort, i % 2 ? "/api/rpc/computer/files/upload" : "/auth/signin", {
          bodyBytes: 16 * MiB,
          chunked: true,
        }),
      ),
    ];
    const results = await Promise.all(streams);
    // Refused without a token (401), without the app's header (403) or at the pre-sign-in cap
    // (413): never read to the end.
    for (const r of results) expect([401, 403, 413]).toContain(r.status);
    const after = await peaks();
    const growthMib =
      (after.api - before.api + (after.web - before.web) + (after.bridge - before.bridge)) / 1024;
    console.log(`32 chunked bodies: peak RSS growth api+web+bridge ${growthMib.toFixed(1)} MiB`);
    expect(growthMib).toBeLessThan(32);
  }, 60_000);

  /** A raw request with exactly these headers (fetch would fill in Host and the type itself). */
  async function raw(port: number, path: string, headers: Record<string, string>, body = "") {
    const socket = connect(port, "127.0.0.1");
    await once(socket, "connect");
    const lines = Object.entries({ "content-length": String(Buffer.byteLength(body)), ...headers })
      .map(([name, value]) => `${name}: ${value}`)
      .join("\r\n");
    socket.write(`POST ${path} HTTP/1.1\r\n${lines}\r\nconnection: close\r\n\r\n${body}`);
    let answer = "";
    for await (const chunk of socket) answer += String(chunk);
    const [head = "", text = ""] = answer.split("\r\n\r\n");
    return { status: Number(head.slice(9, 12)), text };
  }
  const setup = JSON.stringify({ userName: "me", spaceName: "Mine", botName: "Ada" });
  const json = { "content-type": "application/json" };

  it("refuses a foreign Host and a text/plain body on API and web, before setup could run", async () => {
    const apiHost = `127.0.0.1:${apiPort}`;
    const webHost = `127.0.0.1:${webPort}`;
    const asApp = { ...json, "x-rakazo-app": "1" };
    // DNS rebinding: the attacker's name in Host, the request itself same-origin for the browser.
    expect(
      (await raw(apiPort, "/rpc/setup/bootstrap", { host: "evil.example", ...json }, setup)).status,
    ).toBe(421);
    expect(
      (await raw(webPort, "/auth/bootstrap", { host: "evil.example:8788", ...asApp }, setup)).status,
    ).toBe(421);
    // CORS simple requests: no preflight for text/plain, so it is refused here.
    const plain = { "content-type": "text/plain;charset=UTF-8" };
    expect((await raw(apiPort, "/rpc/setup/bootstrap", { host: apiHost, ...plain }, setup)).status).toBe(415);
    expect(
      (await raw(webPort, "/auth/bootstrap", { host: webHost, "x-rakazo-app": "1", ...plain }, setup)).status,
    ).toBe(415);
    // Another site's script posting straight to the API.
    const fromPage = { host: apiHost, origin: "https://evil.example", ...json };
    expect((await raw(apiPort, "/rpc/setup/bootstrap", fromPage, setup)).status).toBe(403);
  });

  it("takes first-run setup from another machine only with the setup code; from this one without", async () => {
    const apiHost = `127.0.0.1:${apiPort}`;
    const webHost = `127.0.0.1:${webPort}`;
    const asApp = { host: webHost, ...json, "x-rakazo-app": "1" };
    const forwarded = { "x-forwarded-for": "198.51.100.7" };
    // Through a proxy (the web service's own, or one in front of the API): refused without the code.
    const viaWeb = await raw(webPort, "/auth/bootstrap", { ...asApp, ...forwarded }, setup);
    expect([viaWeb.status, viaWeb.text]).toEqual([401, expect.stringContaining("setup code")]);
    const viaApi = await raw(
      apiPort,
      "/rpc/setup/bootstrap",
      { host: apiHost, ...json, ...forwarded },
      setup,
    );
    expect(viaApi.status).toBe(401);
    const wrongCode = JSON.stringify({ ...JSON.parse(setup), bootstrapToken: "not-the-code-at-all-000000" });
    expect((await raw(webPort, "/auth/bootstrap", { ...asApp, ...forwarded }, wrongCode)).status).toBe(401);
    // With the code, from anywhere.
    const withCode = JSON.stringify({ ...JSON.parse(setup), bootstrapToken: SETUP_CODE });
    const done = await raw(webPort, "/auth/bootstrap", { ...asApp, ...forwarded }, withCode);
    expect(done.status, done.text).toBe(200);
    // Set up once: from this machine it is now ALREADY_BOOTSTRAPPED, not open again.
    const again = await raw(apiPort, "/rpc/setup/bootstrap", { host: apiHost, ...json }, setup);
    expect([again.status, again.text]).toEqual([409, expect.stringContaining("ALREADY_BOOTSTRAPPED")]);
  });
});
