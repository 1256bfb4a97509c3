/**
 * The Boat client's wire rules against a scripted loopback server (the Docker-backed emulator
 * suite, packages/emulators, covers the lifecycle): envelopes become codes, 429 waits what the
 * service says, 409 races are retried only where repeating is safe, deletion is polled to the
 * end, the key stays in the Authorization header.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { BoatApiError, createBoatClient } from "./client.ts";

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}
type Answer = { status: number; body?: unknown; headers?: Record<string, string> };

const servers: http.Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
});

async function scripted(answers: Answer[]): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = http.createServer((request, response) => {
    let body = "";
    request.on("data", (c: Buffer) => (body += c.toString()));
    request.on("end", () => {
      seen.push({ method: request.method ?? "", url: request.url ?? "", headers: request.headers, body });
      const answer = answers.shift() ?? {
        status: 500,
        body: { ok: false, code: "script_exhausted", message: "" },
      };
      response.writeHead(answer.status, { "content-type": "application/json", ...answer.headers });
      response.end(answer.body === undefined ? "" : JSON.stringify(answer.body));
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`, seen };
}

const envelope = (status: number, code: string, message = code) => ({
  ok: false,
  type: "sandbox.error",
  status,
  code,
  message,
  requestId: "req_1",
  error: { code, message, status },
});
const sandbox = { id: "bx_23456789", name: "n", state: "idle" };

function client(url: string, waits: number[]) {
  return createBoatClient({
    baseUrl: url,
    apiKey: "boat_secret_key",
    sleep: async (ms) => {
      waits.push(ms);
    },
  });
}

describe("Boat client", () => {
  it("creates with Idempotency-Key and noEnv, the key only in Authorization", async () => {
    const { url, seen } = await scripted([
      { status: 202, body: { ok: true, status: "provisioning", sandbox } },
    ]);
    const created = await client(url, []).create(
      { noEnv: true, ttlSeconds: 7200 },
      { idempotencyKey: "key-1" },
    );
    expect(created.id).toBe("bx_23456789");
    expect(seen[0]?.method).toBe("POST");
    expect(seen[0]?.url).toBe("/api/v1/sandboxes");
    expect(seen[0]?.headers["idempotency-key"]).toBe("key-1");
    expect(seen[0]?.headers.authorization).toBe("Bearer boat_secret_key");
    expect(JSON.parse(seen[0]?.body ?? "")).toEqual({ noEnv: true, ttlSeconds: 7200 });
  });

  it("a 429 waits the Retry-After the service sent, then succeeds", async () => {
    const { url, seen } = await scripted([
      { status: 429, body: envelope(429, "rate_limited"), headers: { "retry-after": "7" } },
      { status: 429, body: envelope(429, "rate_limited"), headers: { "retry-after": "2" } },
      { status: 200, body: { ok: true, sandbox } },
    ]);
    const waits: number[] = [];
    expect((await client(url, waits).get("bx_23456789")).state).toBe("idle");
    expect(waits).toEqual([7000, 2000]);
    expect(seen).toHaveLength(3);
  });

  it("a 409 race during archive is retried; a 409 that is not a race is not", async () => {
    const race = await scripted([
      { status: 409, body: envelope(409, "sandbox_busy") },
      { status: 202, body: { ok: true, id: "bx_23456789", status: "archiving" } },
    ]);
    const waits: number[] = [];
    await client(race.url, waits).stop("bx_23456789");
    expect(race.seen.map((s) => s.url)).toEqual([
      "/api/v1/sandboxes/bx_23456789/stop",
      "/api/v1/sandboxes/bx_23456789/stop",
    ]);
    expect(waits).toEqual([1000]);

    const notRace = await scripted([{ status: 409, body: envelope(409, "sandbox_not_ready") }]);
    const error = await client(notRace.url, [])
      .stop("bx_23456789")
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BoatApiError);
    expect((error as BoatApiError).code).toBe("sandbox_not_ready");
    expect(notRace.seen).toHaveLength(1);
  });

  it("gives up after maxRetries and reports the stable code", async () => {
    const { url, seen } = await scripted(
      Array.from({ length: 10 }, () => ({ status: 429, body: envelope(429, "rate_limited") })),
    );
    const waits: number[] = [];
    const error = await createBoatClient({
      baseUrl: url,
      apiKey: "boat_secret_key",
      maxRetries: 2,
      sleep: async (ms) => {
        waits.push(ms);
      },
    })
      .get("bx_23456789")
      .catch((e: unknown) => e);
    expect((error as BoatApiError).status).toBe(429);
    expect((error as BoatApiError).code).toBe("rate_limited");
    // No Retry-After: exponential from one second.
    expect(waits).toEqual([1000, 2000]);
    expect(seen).toHaveLength(3);
    expect(String(error)).not.toContain("boat_secret_key");
  });

  it("404 and 410 are gone; delete confirms with the id and polls the operation to completion", async () => {
    const { url, seen } = await scripted([
      {
        status: 202,
        body: { ok: true, operation: { id: "bdop_1", targetId: "bx_23456789", status: "pending" } },
      },
      {
        status: 200,
        body: { ok: true, operation: { id: "bdop_1", targetId: "bx_23456789", status: "processing" } },
      },
      {
        status: 200,
        body: { ok: true, operation: { id: "bdop_1", targetId: "bx_23456789", status: "completed" } },
      },
      { status: 410, body: envelope(410, "sandbox_deleted") },
    ]);
    const boat = client(url, []);
    await boat.deleteAndWait("bx_23456789", { pollMs: 1 });
    expect(seen[0]?.headers["x-ascii-confirm-delete"]).toBe("bx_23456789");
    expect(seen.slice(1, 3).map((s) => s.url)).toEqual([
      "/api/v1/deletion-operations/bdop_1",
      "/api/v1/deletion-operations/bdop_1",
    ]);
    const gone = await boat.get("bx_23456789").catch((e: unknown) => e);
    expect((gone as BoatApiError).gone).toBe(true);
    // Deleting what is already gone is done, not an error.
    const again = await scripted([{ status: 404, body: envelope(404, "sandbox_not_found") }]);
    expect(await client(again.url, []).delete("bx_23456789")).toBeNull();
  });

  it("streams command output from NDJSON frames and returns the exit frame's result", async () => {
    const server = http.createServer((request, response) => {
      request.resume();
      response.writeHead(200, { "content-type": "application/x-ndjson" });
      response.write('{"type":"started"}\n{"type":"stdout","data":"he"}\n');
      setTimeout(() => {
        response.write('{"type":"stdout","data":"llo\\n"}\n{"type":"stderr","data":"warn"}\n');
        response.end('{"type":"exit","success":false,"exitCode":3,"timedOut":false}\n');
      }, 20);
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
    const chunks: string[] = [];
    const result = await client(url, []).commandStream("bx_23456789", { command: "x" }, (stream, data) =>
      chunks.push(`${stream}:${data}`),
    );
    expect(result).toEqual({
      success: false,
      exitCode: 3,
      stdout: "hello\n",
      stderr: "warn",
      timedOut: false,
    });
    expect(chunks).toEqual(["stdout:he", "stdout:llo\n", "stderr:warn"]);
  });
});
