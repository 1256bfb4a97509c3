/**
 * The persistent supervisor channel of remote computers (CMP-8), against a stand-in for the
 * gateway's RPC route (the route itself: infra/sandboxes/supervisor/src/gateway/rpc.test.ts):
 * when it opens, what it sends, and what happens to a call when it fails.
 */
import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { SUPERVISOR_RPC_KEY_HEADER } from "@rakazo/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isSandboxError, SandboxError } from "../errors.ts";
import type { SupervisorTransport } from "../supervisor-client.ts";
import { HEALTH_RESULT } from "../testing/supervisor-answers.ts";
import { REOPEN_MS, supervisorChannel } from "./supervisor-channel.ts";

const HEALTH = HEALTH_RESULT;

const newKey = () => randomBytes(32).toString("base64url");

/** The gateway's route as the channel sees it: a key, answers, and a switch to drop calls. */
let server: http.Server;
let url: string;
let key: string | undefined;
let seen: { method: string; url: string; key: string | undefined; provider: string | undefined }[];
let dropNext: string | undefined;
let forbidNext: string | undefined;

beforeEach(async () => {
  key = newKey();
  seen = [];
  dropNext = undefined;
  forbidNext = undefined;
  server = http.createServer((request, response) => {
    const method = (request.url ?? "").replace("/v1/rpc/", "");
    const given = request.headers[SUPERVISOR_RPC_KEY_HEADER] as string | undefined;
    seen.push({
      method,
      url: request.url ?? "",
      key: given,
      provider: request.headers["x-provider-auth"] as string,
    });
    request.resume();
    if (given !== key) {
      response.writeHead(401).end('{"ok":false,"reason":"unauthorized"}');
      return;
    }
    if (forbidNext === method) {
      forbidNext = undefined;
      response.writeHead(403).end("provider refused");
      return;
    }
    if (dropNext === method) {
      dropNext = undefined;
      request.socket.destroy();
      return;
    }
    const result = method === "health" ? HEALTH : { released: true };
    response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ ok: true, result }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function setup(options: { daemonStarted?: boolean; printedKey?: () => string | undefined } = {}) {
  let clock = 0;
  let started = options.daemonStarted ?? true;
  const commandCalls: string[] = [];
  const commands: SupervisorTransport = {
    async call(method) {
      commandCalls.push(method);
      started = true; // the command path starts the daemon
      if (method === "health") return HEALTH as never;
      return { released: true } as never;
    },
  };
  const channel = supervisorChannel({
    commands,
    target: async () => ({ url, headers: { "x-provider-auth": "provider-token" } }),
    readKey: async () => {
      if (!started || key === undefined) throw new SandboxError("FILE_NOT_FOUND", "no rpc.key");
      return new Uint8Array(Buffer.from(`${key}\n`));
    },
    ...(options.printedKey
      ? {
          startKey: () => {
            const printed = options.printedKey?.();
            options.printedKey = undefined;
            return printed === undefined ? undefined : new Uint8Array(Buffer.from(printed));
          },
        }
      : {}),
    timeoutMs: 5_000,
    now: () => clock,
  });
  return { channel, commandCalls, advance: (ms: number) => (clock += ms) };
}

describe("supervisor channel (CMP-8)", () => {
  it("takes the command path until the daemon has a key, then the port, with key and provider auth in headers", async () => {
    const { channel, commandCalls, advance } = setup({ daemonStarted: false });
    await channel.call("desktop.release", { botId: "bot_a" });
    expect(commandCalls).toEqual(["desktop.release"]);
    expect(seen).toEqual([]);
    advance(REOPEN_MS);
    await channel.call("desktop.release", { botId: "bot_a" });
    await channel.call("desktop.release", { botId: "bot_a" });
    expect(commandCalls).toEqual(["desktop.release"]);
    expect(seen.map((s) => s.method)).toEqual(["health", "desktop.release", "desktop.release"]);
    for (const request of seen) {
      expect(request.key).toBe(key);
      expect(request.provider).toBe("provider-token");
      expect(request.url).not.toContain(key as string);
    }
  });

  it("opens with the key a start script printed without a health probe; a stale one is read again", async () => {
    const fresh = setup({ printedKey: () => key });
    await fresh.channel.call("desktop.release", { botId: "bot_a" });
    expect(seen.map((s) => s.method)).toEqual(["desktop.release"]);
    expect(seen[0]?.key).toBe(key);

    // The daemon restarted after the script printed its key: 401, then the file's key, probed.
    seen = [];
    const printed = key;
    key = newKey();
    const stale = setup({ printedKey: () => printed });
    await expect(stale.channel.call("desktop.release", { botId: "bot_a" })).resolves.toEqual({
      released: true,
    });
    expect(seen.map((s) => s.method)).toEqual(["desktop.release", "health", "desktop.release"]);
    expect(seen.map((s) => s.key)).toEqual([printed, key, key]);
    expect(stale.commandCalls).toEqual([]);
  });

  it("re-reads a restarted daemon's key at once, without the command path", async () => {
    const { channel, commandCalls } = setup();
    await channel.call("health", {});
    key = newKey();
    await expect(channel.call("desktop.release", { botId: "bot_a" })).resolves.toEqual({ released: true });
    expect(commandCalls).toEqual([]);
    expect(seen.map((s) => s.method)).toEqual([
      "health",
      "health",
      "desktop.release",
      "health",
      "desktop.release",
    ]);
  });

  it("sends a call that is safe to repeat again by the command path when the connection fails mid-call", async () => {
    const { channel, commandCalls } = setup();
    await channel.call("health", {});
    dropNext = "desktop.release";
    await expect(channel.call("desktop.release", { botId: "bot_a" })).resolves.toEqual({ released: true });
    expect(commandCalls).toEqual(["desktop.release"]);
  });

  it("never sends an action twice: a failed desktop.act is DESKTOP_UNAVAILABLE, not re-run", async () => {
    const { channel, commandCalls } = setup();
    await channel.call("health", {});
    dropNext = "desktop.act";
    const failure = await channel
      .call("desktop.act", { botId: "bot_a", actions: [] })
      .catch((e: unknown) => e);
    expect(isSandboxError(failure, "DESKTOP_UNAVAILABLE")).toBe(true);
    expect(commandCalls).toEqual([]);
  });

  it("sends an action by the command path when the provider's port auth refused it (403): it never ran", async () => {
    const { channel, commandCalls } = setup();
    await channel.call("health", {});
    forbidNext = "desktop.act";
    await channel.call("desktop.act", { botId: "bot_a", actions: [] }).catch(() => undefined);
    expect(commandCalls).toEqual(["desktop.act"]);
  });

  it("after a failure keeps to the command path for REOPEN_MS, then opens the channel again", async () => {
    const { channel, commandCalls, advance } = setup();
    await channel.call("health", {});
    dropNext = "desktop.release";
    await channel.call("desktop.release", { botId: "bot_a" });
    await channel.call("desktop.release", { botId: "bot_a" });
    expect(commandCalls).toEqual(["desktop.release", "desktop.release"]);
    advance(REOPEN_MS);
    const before = seen.length;
    await channel.call("desktop.release", { botId: "bot_a" });
    expect(commandCalls).toHaveLength(2);
    expect(seen.slice(before).map((s) => s.method)).toEqual(["health", "desktop.release"]);
  });

  it("refuses a key file that is not a key: no request carries it", async () => {
    key = "not a key\r\nx-injected: 1";
    const { channel, commandCalls } = setup();
    await channel.call("health", {});
    expect(commandCalls).toEqual(["health"]);
    expect(seen).toEqual([]);
  });
});
