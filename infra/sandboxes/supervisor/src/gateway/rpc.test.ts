/**
 * The supervisor's RPC on a TCP gateway listener (CMP-8): served to holders of the daemon's key
 * only, the key on disk private and never written through a planted link, `/exec` unreachable,
 * and nothing under `/v1/rpc/` served by a gateway that was not given the RPC.
 */
import { lstatSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import {
  SUPERVISOR_RPC_KEY_FILE,
  SUPERVISOR_RPC_KEY_HEADER,
  SUPERVISOR_RPC_KEY_PATTERN,
} from "@rakazo/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createContext } from "../daemon/context.ts";
import { rpcHandler } from "../daemon/rpc-server.ts";
import { DesktopSlots } from "../desktops/desktop-slots.ts";
import type { StackLauncher } from "../desktops/desktop-stack.ts";
import { ComputerGateway } from "./computer-gateway.ts";
import { issueRpcKey } from "./rpc.ts";

let dir: string;
let gateway: ComputerGateway;
let events: Record<string, unknown>[];

/** A supervisor whose desktops are never started: `health` and `desktop.list` need none. */
function supervisor(): DesktopSlots {
  const launcher: StackLauncher = {
    start: () => Promise.reject(new Error("no desktops in this test")),
  };
  return new DesktopSlots({
    launcher,
    workspace: mkdtempSync(path.join(os.tmpdir(), "rpc-ws-")),
    layout: { runDir: dir, displayBase: 10, debugPortBase: 1 },
    screenLimit: 0,
  });
}

async function startGateway(withRpc: boolean): Promise<string | undefined> {
  gateway = new ComputerGateway({
    listen: { host: "127.0.0.1", port: 0 },
    stateDir: dir,
    slotAt: () => undefined,
    log: (event) => events.push(event),
  });
  const sup = supervisor();
  if (withRpc)
    gateway.serveRpc({
      keyHash: issueRpcKey(dir),
      handle: rpcHandler(createContext({ desktops: sup, gateway })),
    });
  await gateway.start();
  return withRpc ? readFileSync(path.join(dir, SUPERVISOR_RPC_KEY_FILE), "utf8") : undefined;
}

function post(route: string, key?: string, body = "{}") {
  return fetch(`http://127.0.0.1:${gateway.port}${route}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(key === undefined ? {} : { [SUPERVISOR_RPC_KEY_HEADER]: key }),
    },
    body,
  });
}

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), "rpc-gw-"));
  events = [];
});

afterEach(async () => {
  await gateway?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("supervisor RPC on the gateway listener (CMP-8)", () => {
  it("answers a holder of the daemon's key with the socket's answers", async () => {
    const key = (await startGateway(true)) as string;
    expect(key).toMatch(SUPERVISOR_RPC_KEY_PATTERN);
    expect(lstatSync(path.join(dir, SUPERVISOR_RPC_KEY_FILE)).mode & 0o777).toBe(0o600);
    const health = await post("/v1/rpc/health", key);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ ok: true, result: { ok: true, pid: process.pid, live: 0 } });
    // Params are validated as on the socket: an error answer, not a crash.
    const bad = await post("/v1/rpc/desktop.observe", key, '{"botId":""}');
    expect(await bad.json()).toMatchObject({ ok: false, error: { code: "INVALID_ACTION" } });
  });

  it("refuses a missing or wrong key with 401, logs the reason and never the key", async () => {
    const key = (await startGateway(true)) as string;
    const missing = await post("/v1/rpc/health");
    expect(missing.status).toBe(401);
    expect(await missing.json()).toEqual({ ok: false, reason: "unauthorized" });
    const wrong = `${key.slice(0, -1)}${key.endsWith("A") ? "B" : "A"}`;
    expect((await post("/v1/rpc/health", wrong)).status).toBe(401);
    expect(events.map((e) => e.reason)).toEqual(["missing_key", "bad_key"]);
    expect(JSON.stringify(events)).not.toContain(key.slice(0, 12));
  });

  it("a restarted daemon's new key retires the old one", async () => {
    const first = (await startGateway(true)) as string;
    await gateway.close();
    const second = (await startGateway(true)) as string;
    expect(second).not.toBe(first);
    expect((await post("/v1/rpc/health", first)).status).toBe(401);
    expect((await post("/v1/rpc/health", second)).status).toBe(200);
  });

  it("does not serve /exec, nor anything under /v1/rpc/ without the RPC", async () => {
    const key = (await startGateway(true)) as string;
    const exec = await post("/v1/rpc/../../exec", key, '{"argv":["id"]}');
    expect(exec.status).not.toBe(200);
    expect((await post("/exec", key, '{"argv":["id"]}')).status).toBe(404);
    await gateway.close();
    await startGateway(false);
    expect((await post("/v1/rpc/health", key)).status).toBe(404);
  });

  it("writes the key through no link planted at its name", async () => {
    const target = path.join(dir, "victim");
    writeFileSync(target, "untouched");
    symlinkSync(target, path.join(dir, SUPERVISOR_RPC_KEY_FILE));
    issueRpcKey(dir);
    expect(readFileSync(target, "utf8")).toBe("untouched");
    expect(lstatSync(path.join(dir, SUPERVISOR_RPC_KEY_FILE)).isSymbolicLink()).toBe(false);
  });
});
