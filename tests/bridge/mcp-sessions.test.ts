// MCP sessions over streamable HTTP end without a DELETE: the real bridge (a child process, idle
// timeout 1 s, two sessions per client) in front of the real API on the fake provider. A session
// nobody calls is closed and its `keep: false` computer destroyed; a call that outlasts the
// timeout is not cut off; a client past its cap is refused with 429 and a JSON-RPC error while
// another client still opens sessions.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createExternalClient } from "@rakazo/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ExternalStack, startExternalStack } from "../support/external.ts";
import { eventually } from "../support/system.ts";
import { openMcpSession } from "./mcp-session.ts";

const IDLE_SECONDS = 1;
let stack: ExternalStack;

beforeAll(async () => {
  stack = await startExternalStack({
    provider: "fake",
    clients: ["alpha", "beta"],
    bridgeEnv: { BRIDGE_MCP_IDLE_SECONDS: String(IDLE_SECONDS), BRIDGE_MCP_MAX_SESSIONS_PER_CLIENT: "2" },
  });
}, 60_000);

afterAll(async () => {
  if (!stack) return;
  await stack.destroyAll();
  await stack.close();
}, 60_000);

const token = (client: "alpha" | "beta") => stack.clientTokens[client] as string;

async function liveIds(): Promise<Set<string>> {
  const api = createExternalClient({ baseUrl: stack.apiUrl, token: stack.externalToken });
  return new Set((await api.call("external/computer/list", {})).map((c) => c.computerId));
}

/** An MCP session as `client`, for `conversation`. */
const mcpSession = (client: "alpha" | "beta", conversation: string) =>
  openMcpSession(stack.bridgeUrl(), token(client), conversation, `bridge-sessions-${client}`);

const initialize = (bearer: string) =>
  fetch(`${stack.bridgeUrl()}/mcp`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${bearer}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    }),
  });

describe("MCP sessions over HTTP expire and are capped per client", () => {
  it("a session nobody calls is closed after its idle timeout and its keep:false computer destroyed", async () => {
    const session = await mcpSession("alpha", "idle-then-gone");
    const made = await session.call("rakazo_computer_create");
    expect((await liveIds()).has(made.computerId)).toBe(true);
    await session.abandon();

    const started = Date.now();
    await eventually(async () => ((await liveIds()).has(made.computerId) ? undefined : true), 15_000);
    const tookMs = Date.now() - started;
    // Expired by the sweep, a little after the timeout (it looks every quarter of it).
    expect(tookMs).toBeLessThan(IDLE_SECONDS * 1_000 * 5);
    console.log(`idle session ended and its computer destroyed ${tookMs} ms after its last request`);
    // The session is gone: its id answers like an unknown one.
    const res = await fetch(`${stack.bridgeUrl()}/mcp`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${token("alpha")}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-session-id": session.sessionId,
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
    });
    expect(res.status).toBe(404);
  });

  it("a call that outlasts the idle timeout runs to its end, and the session lives on", async () => {
    const session = await mcpSession("alpha", "long-call");
    const made = await session.call("rakazo_computer_create");
    const slept = await session.call("rakazo_computer_exec", { argv: ["sleep", String(IDLE_SECONDS * 3)] });
    expect(slept.exitCode).toBe(0);
    // Right after the long call the session is fresh again.
    expect((await session.call("rakazo_computer_exec", { argv: ["echo", "after"] })).stdout).toBe("after\n");
    expect((await liveIds()).has(made.computerId)).toBe(true);
    await session.end();
    expect((await liveIds()).has(made.computerId)).toBe(false);
  });

  it("past the cap a client is refused with 429 and a JSON-RPC error; other clients are not", async () => {
    const first = await mcpSession("alpha", "cap-1");
    const second = await mcpSession("alpha", "cap-2");
    // Keep both alive while the third is tried.
    await first.call("rakazo_computers");
    await second.call("rakazo_computers");

    const refused = await initialize(token("alpha"));
    expect(refused.status).toBe(429);
    expect(await refused.json()).toEqual({
      jsonrpc: "2.0",
      error: { code: -32000, message: expect.stringContaining("2 MCP sessions open") },
      id: null,
    });
    // The SDK's client sees the refusal as a failed connect.
    const transport = new StreamableHTTPClientTransport(new URL(`${stack.bridgeUrl()}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token("alpha")}` } },
    });
    await expect(new Client({ name: "third", version: "1" }).connect(transport)).rejects.toThrow();

    const other = await mcpSession("beta", "cap-other");
    expect(await other.call("rakazo_computers")).toEqual([]);
    await other.end();

    // One ended, one more may open.
    await first.end();
    const again = await mcpSession("alpha", "cap-3");
    await again.end();
    await second.end();
  });
});
