/**
 * Transports and the desktop decoder against a stand-in supervisor: a real HTTP server on a Unix
 * socket (canned answers) and an exec function. The real daemon is exercised by
 * infra/sandboxes/supervisor/src/daemon/daemon.integration.test.ts.
 */
import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SandboxError } from "./errors.ts";
import { createSupervisedDesktop } from "./supervised-desktop.ts";
import {
  type CommandExec,
  commandTransport,
  inProcessTransport,
  unixSocketTransport,
} from "./supervisor-client.ts";
import { HEALTH_RESULT } from "./testing/supervisor-answers.ts";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function standIn(
  answer: (method: string, params: unknown) => unknown,
  at = path.join(mkdtempSync(path.join(os.tmpdir(), "supclient-")), "supervisor.sock"),
) {
  const socket = at;
  const calls: { method: string; params: unknown }[] = [];
  let connections = 0;
  let dropNext = false;
  const served = new WeakSet<object>();
  const server = http.createServer((request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => {
      body += chunk.toString();
    });
    request.on("end", () => {
      const method = (request.url ?? "").replace("/rpc/", "");
      const params: unknown = JSON.parse(body);
      calls.push({ method, params });
      // A daemon going away with the request read and unanswered, on a kept-alive connection.
      if (dropNext && served.has(request.socket)) {
        dropNext = false;
        request.socket.destroy();
        return;
      }
      served.add(request.socket);
      response.end(JSON.stringify(answer(method, params)));
    });
  });
  server.on("connection", () => {
    connections += 1;
  });
  const listen = () => new Promise<void>((resolve) => server.listen(socket, resolve));
  const close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  cleanups.push(() => {
    server.close();
    rmSync(path.dirname(socket), { recursive: true, force: true });
  });
  return {
    socket,
    calls,
    listen,
    close,
    connections: () => connections,
    dropNextOnReused: () => {
      dropNext = true;
    },
  };
}

const observation = {
  pngBase64: Buffer.from("png!").toString("base64"),
  width: 1280,
  height: 800,
  frameHash: "abc",
  slot: { index: 2, generation: 7 },
};

describe("unixSocketTransport", () => {
  it("posts /rpc/<method> with JSON params and decodes the result", async () => {
    const stand = await standIn(() => ({ ok: true, result: observation }));
    await stand.listen();
    const desktop = createSupervisedDesktop(unixSocketTransport(stand.socket));
    const seen = await desktop.observe("bot-1");
    expect(stand.calls).toEqual([{ method: "desktop.observe", params: { botId: "bot-1" } }]);
    expect(Buffer.from(seen.png).toString()).toBe("png!");
    expect(seen.slot).toEqual({ index: 2, generation: 7 });
  });

  it("turns an error answer into a SandboxError with its code", async () => {
    const stand = await standIn(() => ({
      ok: false,
      error: { code: "MULTI_SCREEN_UNAVAILABLE", message: "cap 2" },
    }));
    await stand.listen();
    const error = await unixSocketTransport(stand.socket)
      .call("desktop.observe", { botId: "b" })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SandboxError);
    expect(error).toMatchObject({ code: "MULTI_SCREEN_UNAVAILABLE" });
  });

  it("carries a refusal's reason, and only known scalar details, from the computer", async () => {
    const stand = await standIn(() => ({
      ok: false,
      error: {
        code: "MULTI_SCREEN_UNAVAILABLE",
        message: "no room",
        details: { reason: "memory", active: 4, limit: 0, planted: "x", extra: { deep: 1 } },
      },
    }));
    await stand.listen();
    const error = await unixSocketTransport(stand.socket)
      .call("desktop.observe", { botId: "b" })
      .catch((e: unknown) => e);
    expect((error as SandboxError).details).toEqual({ reason: "memory", active: 4, limit: 0 });
  });

  it("maps unknown codes to SANDBOX_PROVIDER_ERROR", async () => {
    const stand = await standIn(() => ({ ok: false, error: { code: "WAT", message: "?" } }));
    await stand.listen();
    await expect(unixSocketTransport(stand.socket).call("health", {})).rejects.toMatchObject({
      code: "SANDBOX_PROVIDER_ERROR",
    });
  });

  it("starts the supervisor when nothing listens, then retries", async () => {
    const stand = await standIn(() => ({ ok: true, result: HEALTH }));
    let started = 0;
    const transport = unixSocketTransport(stand.socket, {
      startSupervisor: async () => {
        started += 1;
        await stand.listen();
      },
    });
    await expect(transport.call("health", {})).resolves.toEqual(HEALTH);
    expect(started).toBe(1);
  });

  it("waits for a supervisor that starts listening only after the starter returned", async () => {
    // A replacement container: its own supervisor is still loading when the command path's
    // `health` returns, and the old socket file refuses connections until it listens.
    const stand = await standIn(() => ({ ok: true, result: HEALTH }));
    const transport = unixSocketTransport(stand.socket, {
      startSupervisor: async () => {
        setTimeout(() => void stand.listen(), 1_000);
      },
    });
    await expect(transport.call("health", {})).resolves.toEqual(HEALTH);
  });

  it("gives up on a socket nobody listens on after the start wait, as DESKTOP_UNAVAILABLE", async () => {
    const stand = await standIn(() => ({ ok: true, result: HEALTH }));
    const transport = unixSocketTransport(stand.socket, {
      startSupervisor: async () => {},
      startWaitMs: 300,
    });
    await expect(transport.call("health", {})).rejects.toMatchObject({
      code: "DESKTOP_UNAVAILABLE",
      message: expect.stringContaining("after start"),
    });
  });

  it("keeps one connection to the supervisor across calls", async () => {
    const stand = await standIn(() => ({ ok: true, result: HEALTH }));
    await stand.listen();
    const transport = unixSocketTransport(stand.socket);
    for (let i = 0; i < 10; i++) await transport.call("health", {});
    expect(stand.calls).toHaveLength(10);
    expect(stand.connections()).toBe(1);
  });

  it("reaches a restarted supervisor on the same path", async () => {
    const first = await standIn(() => ({ ok: true, result: HEALTH }));
    await first.listen();
    const transport = unixSocketTransport(first.socket);
    await transport.call("health", {});
    await first.close();
    const restarted = await standIn(() => ({ ok: true, result: { ...HEALTH, pid: 8 } }), first.socket);
    await restarted.listen();
    await expect(transport.call("health", {})).resolves.toMatchObject({ pid: 8 });
  });

  it("sends a read again on a fresh connection when the kept-alive one dies unanswered", async () => {
    const stand = await standIn(() => ({ ok: true, result: HEALTH }));
    await stand.listen();
    const transport = unixSocketTransport(stand.socket);
    await transport.call("health", {});
    stand.dropNextOnReused();
    await expect(transport.call("health", {})).resolves.toEqual(HEALTH);
    // The dropped request and the one sent again.
    expect(stand.calls.map((c) => c.method)).toEqual(["health", "health", "health"]);
    expect(stand.connections()).toBe(2);
  });

  it("never sends an action twice: a kept-alive connection dying unanswered fails it", async () => {
    const stand = await standIn(() => ({ ok: true, result: { completed: 1, total: 1 } }));
    await stand.listen();
    const transport = unixSocketTransport(stand.socket);
    await transport.call("desktop.act", { botId: "b", actions: [{ type: "wait", ms: 1 }] });
    stand.dropNextOnReused();
    await expect(
      transport.call("desktop.act", { botId: "b", actions: [{ type: "wait", ms: 1 }] }),
    ).rejects.toMatchObject({ code: "DESKTOP_UNAVAILABLE" });
    expect(stand.calls.map((c) => c.method)).toEqual(["desktop.act", "desktop.act"]);
    // The next call opens a fresh connection and is served.
    await transport.call("desktop.act", { botId: "b", actions: [{ type: "wait", ms: 1 }] });
    expect(stand.calls).toHaveLength(3);
  });

  it("without a starter, a missing socket is DESKTOP_UNAVAILABLE", async () => {
    await expect(
      unixSocketTransport("/nonexistent/supervisor.sock").call("health", {}),
    ).rejects.toMatchObject({
      code: "DESKTOP_UNAVAILABLE",
    });
  });
});

describe("commandTransport", () => {
  it("runs <cli> <method> '<json>' and decodes the answer line", async () => {
    const argvs: string[][] = [];
    const exec: CommandExec = async (argv) => {
      argvs.push(argv);
      return {
        exitCode: 0,
        stdout: `${JSON.stringify({ ok: true, result: { completed: 1, total: 1 } })}\n`,
        stderr: "",
      };
    };
    const desktop = createSupervisedDesktop(commandTransport(exec));
    await expect(desktop.act("b", [{ type: "key", keys: "ctrl+l" }])).resolves.toEqual({
      completed: 1,
      total: 1,
    });
    expect(argvs).toEqual([
      [
        "node",
        "/opt/rakazo/supervisor.mjs",
        "desktop.act",
        JSON.stringify({ botId: "b", actions: [{ type: "key", keys: "ctrl+l" }] }),
      ],
    ]);
  });

  it("decodes an error answer printed with exit code 1", async () => {
    const exec: CommandExec = async () => ({
      exitCode: 1,
      stdout: JSON.stringify({ ok: false, error: { code: "MULTI_SCREEN_UNAVAILABLE", message: "full" } }),
      stderr: "",
    });
    await expect(commandTransport(exec).call("desktop.observe", { botId: "b" })).rejects.toMatchObject({
      code: "MULTI_SCREEN_UNAVAILABLE",
    });
  });

  it("reports a CLI that printed no answer as a provider error with its stderr", async () => {
    const exec: CommandExec = async () => ({ exitCode: 127, stdout: "", stderr: "node: not found" });
    await expect(commandTransport(exec).call("health", {})).rejects.toThrow(/node: not found/);
  });
});

const HEALTH = HEALTH_RESULT;

describe("createSupervisedDesktop", () => {
  it("decodes list entries into dates and refuses malformed results", async () => {
    const entry = {
      botId: "b",
      slot: { index: 0, generation: 1 },
      display: 10,
      state: "running",
      startedAt: "2025-01-01T00:00:00.000Z",
      lastUsedAt: "2025-01-01T00:00:01.000Z",
      controlled: false,
      vncSocket: "/run/rakazo/vnc/slot0-g1.sock",
      debugPort: 9300,
    };
    let result: unknown = [entry];
    const desktop = createSupervisedDesktop(inProcessTransport(() => result));
    const [info] = await desktop.list();
    expect(info?.lastUsedAt).toEqual(new Date("2025-01-01T00:00:01.000Z"));
    expect(info?.vncSocket).toBe("/run/rakazo/vnc/slot0-g1.sock");
    result = [{ ...entry, slot: null }];
    await expect(desktop.list()).rejects.toMatchObject({ code: "SANDBOX_PROVIDER_ERROR" });
    result = { pngBase64: 1 };
    await expect(desktop.observe("b")).rejects.toMatchObject({ code: "SANDBOX_PROVIDER_ERROR" });
  });
});
