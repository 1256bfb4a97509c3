// The bridge's MCP server as a conformant client sees it, through the SDK's own streamable HTTP
// client against the real bridge (a child process on loopback) in front of the real API on the
// fake provider: an Origin that is not allowed gets 403 before anything else, an allowed
// browser origin gets CORS answers (its preflight too, and the session id is readable); every
// tool's input schema is JSON Schema 2020-12 that Ajv's 2020 validator compiles in strict mode,
// every tool states its four hints and a title; and a page action that fails (a stale ref) is a
// tool error with its stable code, over MCP and over the bridge's HTTP route alike.
import { serve } from "@hono/node-server";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Ajv2020 } from "ajv/dist/2020.js";
import { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useBridgeStack } from "./bridge-stack.ts";

const ALLOWED = "https://app.example";
const bridge = useBridgeStack("bridge-conformance", {
  BRIDGE_ALLOWED_ORIGINS: `${ALLOWED},http://10.0.0.9:8080`,
});
const { token, mcpSession } = bridge;

const initialize = {
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
};

/** A raw request to the bridge with `origin` (and a client's token unless told otherwise). */
function withOrigin(origin: string, path: string, init: RequestInit = {}) {
  return fetch(`${bridge.stack().bridgeUrl()}${path}`, {
    method: "POST",
    ...init,
    headers: {
      authorization: `Bearer ${token("alpha")}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      origin,
      ...(init.headers as Record<string, string> | undefined),
    },
  });
}

// Two pages on loopback for the fake computer's page browser: a ref taken on the first names
// nothing on the second.
let pages: ReturnType<typeof serve> | undefined;
let pagesUrl = "";
beforeAll(async () => {
  const app = new Hono();
  app.get("/", (c) =>
    c.html('<html><head><title>one</title></head><body><a href="/two">to two</a></body></html>'),
  );
  app.get("/two", (c) => c.html("<html><head><title>two</title></head><body><p>second</p></body></html>"));
  await new Promise<void>((ready) => {
    pages = serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0 }, (info) => {
      pagesUrl = `http://127.0.0.1:${info.port}`;
      ready();
    });
  });
});
afterAll(() => void pages?.close());

describe("the bridge's MCP endpoint checks Origin and answers browsers with CORS", () => {
  it("a foreign Origin gets 403 on /mcp (and /v1) before authentication; the SDK client cannot connect", async () => {
    for (const origin of ["https://evil.example", "null", "http://127.0.0.1.evil.example"]) {
      const res = await withOrigin(origin, "/mcp", { body: JSON.stringify(initialize) });
      expect(res.status, origin).toBe(403);
      expect(res.headers.get("access-control-allow-origin")).toBeNull();
      expect(await res.json()).toEqual({
        jsonrpc: "2.0",
        error: { code: -32000, message: expect.stringContaining("Origin") },
        id: null,
      });
    }
    // Without a token too: the Origin is refused first, so a page learns nothing more.
    const anonymous = await withOrigin("https://evil.example", "/mcp", {
      headers: { authorization: "" },
      body: JSON.stringify(initialize),
    });
    expect(anonymous.status).toBe(403);
    const preflight = await withOrigin("https://evil.example", "/mcp", {
      method: "OPTIONS",
      headers: { "access-control-request-method": "POST" },
    });
    expect(preflight.status).toBe(403);
    const v1 = await withOrigin("https://evil.example", "/v1/computers", {
      body: JSON.stringify({ scope: { conversationId: "x" } }),
    });
    expect(v1.status).toBe(403);
    expect(((await v1.json()) as { error: { code: string } }).error.code).toBe("FORBIDDEN_ORIGIN");

    const transport = new StreamableHTTPClientTransport(new URL(`${bridge.stack().bridgeUrl()}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token("alpha")}`, origin: "https://evil.example" } },
    });
    await expect(new Client({ name: "evil", version: "1" }).connect(transport)).rejects.toThrow(
      /Origin may not call the bridge/,
    );
  });

  it("an allowed origin's preflight is answered and its requests carry CORS headers exposing Mcp-Session-Id", async () => {
    const preflight = await withOrigin(ALLOWED, "/mcp", {
      method: "OPTIONS",
      headers: {
        authorization: "",
        "access-control-request-method": "POST",
        "access-control-request-headers": "authorization, content-type, mcp-session-id",
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe(ALLOWED);
    expect(preflight.headers.get("access-control-allow-methods")).toMatch(/POST/);
    const allowed = (preflight.headers.get("access-control-allow-headers") ?? "").split(/,\s*/);
    expect(allowed).toEqual(expect.arrayContaining(["authorization", "content-type", "mcp-session-id"]));

    const opened = await withOrigin(ALLOWED, "/mcp", { body: JSON.stringify(initialize) });
    expect(opened.status).toBe(200);
    expect(opened.headers.get("access-control-allow-origin")).toBe(ALLOWED);
    expect(opened.headers.get("access-control-expose-headers")).toMatch(/mcp-session-id/i);
    const sessionId = opened.headers.get("mcp-session-id");
    expect(sessionId).toBeTruthy();
    await opened.body?.cancel();
    await withOrigin(ALLOWED, "/mcp", {
      method: "DELETE",
      headers: { "mcp-session-id": sessionId as string, "mcp-protocol-version": "2025-06-18" },
    });

    // A refusal after the Origin check (a bad token) is still readable by the allowed page.
    const refused = await withOrigin(ALLOWED, "/mcp", {
      headers: { authorization: "Bearer nope" },
      body: JSON.stringify(initialize),
    });
    expect(refused.status).toBe(401);
    expect(refused.headers.get("access-control-allow-origin")).toBe(ALLOWED);

    // The bridge listens on loopback: the machine's own pages need no listing.
    const local = await mcpSession("alpha", "cors-loopback", { origin: "http://localhost:5173" });
    expect(await local.call("rakazo_computers")).toEqual([]);
    await local.end();
    // Through the SDK's client with an allowed browser Origin: a working session.
    const session = await mcpSession("alpha", "cors-allowed", { origin: ALLOWED });
    expect(await session.call("rakazo_computers")).toEqual([]);
    await session.end();
  });
});

describe("the bridge's MCP tools are described as MCP clients expect", () => {
  it("every input schema is JSON Schema 2020-12 compiling under Ajv2020 strict; every tool has a title and all four hints", async () => {
    const session = await mcpSession("alpha", "schemas");
    const tools = await session.listTools();
    await session.end();
    expect(tools.map((t) => t.name).sort()).toEqual(
      [
        "bash",
        "edit",
        "rakazo_computer_browser",
        "rakazo_computer_create",
        "rakazo_computer_destroy",
        "rakazo_computer_exec",
        "rakazo_computer_observe",
        "rakazo_computers",
        "rakazo_file",
        "rakazo_process",
        "read",
        "write",
      ].sort(),
    );
    const ajv = new Ajv2020({ strict: true });
    for (const tool of tools) {
      expect(tool.inputSchema.$schema, tool.name).toBe("https://json-schema.org/draft/2020-12/schema");
      expect(() => ajv.compile(tool.inputSchema), tool.name).not.toThrow();
      expect(tool.title, tool.name).toEqual(expect.any(String));
      const hints = tool.annotations ?? {};
      for (const hint of ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"] as const) {
        expect(typeof hints[hint], `${tool.name} ${hint}`).toBe("boolean");
      }
    }
    const hintsOf = (name: string) => tools.find((t) => t.name === name)?.annotations;
    for (const name of ["rakazo_computers", "rakazo_computer_observe", "read"]) {
      expect(hintsOf(name), name).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    }
    expect(hintsOf("rakazo_computer_destroy")).toMatchObject({
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: true,
    });
    expect(hintsOf("rakazo_computer_browser")).toMatchObject({ readOnlyHint: false, openWorldHint: true });
    expect(hintsOf("bash")).toMatchObject({ destructiveHint: true, idempotentHint: false });

    // The browser's actions are the page action union the API checks: a model can read them.
    const browser = tools.find((t) => t.name === "rakazo_computer_browser");
    const validate = ajv.compile(browser?.inputSchema ?? {});
    expect(validate({ action: "act", actions: [{ type: "click", ref: "e1" }] })).toBe(true);
    expect(validate({ action: "act", actions: [{ type: "fill", ref: "e1", text: "hi" }] })).toBe(true);
    expect(validate({ action: "act", actions: [{ type: "click" }] })).toBe(false);
    expect(validate({ action: "act", actions: [{ type: "teleport", ref: "e1" }] })).toBe(false);
    expect(validate({ action: "act", actions: [{ do: "click", ref: "e1" }] })).toBe(false);
  });

  it("a bad argument is a tool error the model can read, with INVALID_INPUT", async () => {
    const session = await mcpSession("alpha", "bad-args");
    const wrong = await session.raw("rakazo_computer_browser", {
      action: "act",
      actions: [{ type: "click" }],
    });
    expect(wrong.isError).toBe(true);
    expect(wrong.content[0]?.text).toMatch(/^INVALID_INPUT: actions\.0/);
    const extra = await session.raw("rakazo_computers", { nope: 1 });
    expect(extra.isError).toBe(true);
    expect(extra.content[0]?.text).toMatch(/^INVALID_INPUT: .*nope/);
    await session.end();
  });
});

describe("a failed page action is a failure with its code", () => {
  it("a stale ref: isError with STALE_REF over MCP, an error status with STALE_REF over HTTP", async () => {
    const session = await mcpSession("alpha", "stale-ref");
    const made = await session.call("rakazo_computer_create");
    await session.call("rakazo_computer_browser", { action: "navigate", url: `${pagesUrl}/` });
    const snap = await session.call("rakazo_computer_browser", { action: "snapshot" });
    const link = snap.elements.find((e: { role: string }) => e.role === "link");
    expect(link).toBeDefined();
    await session.call("rakazo_computer_browser", { action: "navigate", url: `${pagesUrl}/two` });

    const stale = await session.raw("rakazo_computer_browser", {
      action: "act",
      actions: [{ type: "click", ref: link.ref }],
    });
    expect(stale.isError).toBe(true);
    expect(stale.content[0]?.text).toMatch(/^STALE_REF: /);
    expect(stale.content[0]?.text).toContain('"completed": 0');
    await session.end();

    // The same over POST /v1/computer_browser.
    const scope = { conversationId: "stale-ref-http" };
    const held = (await bridge.stack().bridge("computer_create", { scope }, token("alpha"))).json.result;
    const target = { computerId: held.computerId, capability: held.capability };
    const browse = (body: object) =>
      bridge.stack().bridge("computer_browser", { ...target, ...body }, token("alpha"));
    expect((await browse({ action: "navigate", url: `${pagesUrl}/` })).status).toBe(200);
    const ref = (await browse({ action: "snapshot" })).json.result.elements[0].ref;
    expect((await browse({ action: "navigate", url: `${pagesUrl}/two` })).status).toBe(200);
    const res = await browse({ action: "act", actions: [{ type: "click", ref }] });
    expect(res.status).toBe(409);
    expect(res.json.error).toMatchObject({
      code: "STALE_REF",
      details: { completed: 0, total: 1, index: 0, uncertain: false },
    });
    expect((await bridge.stack().bridge("computer_destroy", target, token("alpha"))).status).toBe(200);
    expect((await bridge.liveComputers()).has(made.computerId)).toBe(false);
  });
});
