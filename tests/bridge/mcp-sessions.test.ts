// MCP sessions over streamable HTTP end without a DELETE: the real bridge (a child process, idle
// timeout 1 s, two sessions per client) in front of the real API on the fake provider. A session
// nobody calls is closed and its `keep: false` computer destroyed; a call that outlasts the
// timeout is not cut off; a client past its cap is refused with 429 and a JSON-RPC error while
// another client still opens sessions.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { describe, expect, it } from "vitest";
import { eventually } from "../support/system.ts";
import { useBridgeStack } from "./bridge-stack.ts";

const IDLE_SECONDS = 1;
const bridge = useBridgeStack("bridge-sessions", {
  BRIDGE_MCP_IDLE_SECONDS: String(IDLE_SECONDS),
  BRIDGE_MCP_MAX_SESSIONS_PER_CLIENT: "2",
});
const { token, mcpSession } = bridge;

const liveIds = async () => new Set((await bridge.liveComputers()).keys());

const initialize = (bearer: string) =>
  bridge.postMcp(bearer, {
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
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
    const res = await bridge.postMcp(
      token("alpha"),
      { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} },
      session.sessionId,
    );
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
    const transport = new StreamableHTTPClientTransport(new URL(`${bridge.stack().bridgeUrl()}/mcp`), {
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
