/**
 * The bridge's HTTP surface (issue 19): `GET /health`, `POST /v1/<tool>` (tools.ts) and MCP over
 * streamable HTTP at `/mcp` (mcp.ts), every route but health behind BRIDGE_TOKEN. It holds the
 * API's external token and hands it to no one; callers hold only BRIDGE_TOKEN and the
 * capabilities create returns. It keeps no database and writes nothing to disk.
 */
import { createHash, randomUUID, timingSafeEqual } from "node:crypto";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { createExternalClient } from "@rakazo/client";
import type { Logger } from "@rakazo/log";
import { Hono } from "hono";
import { Computers } from "./computers.ts";
import { BridgeError } from "./errors.ts";
import { createMcpSession } from "./mcp.ts";
import { runTool } from "./tools.ts";

export interface BridgeOptions {
  readonly apiUrl: string;
  /** The API's EXTERNAL_COMPUTER_TOKEN. */
  readonly externalToken: string;
  /** What callers present. */
  readonly bridgeToken: string;
  readonly log: Logger;
  /** Defaults to the global fetch. */
  readonly fetch?: (request: Request) => Promise<Response>;
}

const sha256 = (value: string): Buffer => createHash("sha256").update(value).digest();

export function createBridge(options: BridgeOptions) {
  const { log } = options;
  const tokenHash = sha256(options.bridgeToken);
  const computers = new Computers(
    createExternalClient({
      baseUrl: options.apiUrl,
      token: options.externalToken,
      ...(options.fetch ? { fetch: options.fetch } : {}),
    }),
  );
  const callTool = (name: string, body: unknown) => runTool(computers, name, body);
  const mcpSessions = new Map<
    string,
    { transport: WebStandardStreamableHTTPServerTransport; close: () => Promise<void> }
  >();

  const app = new Hono();

  app.use("*", async (c, next) => {
    const started = performance.now();
    await next();
    // Method, path and status only: never headers or bodies (they carry tokens and capabilities).
    log.info("bridge.request", {
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      durationMs: Math.round(performance.now() - started),
    });
  });

  app.onError((error, c) => {
    if (error instanceof BridgeError) {
      return c.json({ error: { code: error.code, message: error.message } }, error.status as 400);
    }
    log.error("bridge.unhandled_error", { path: c.req.path, error });
    return c.json({ error: { code: "INTERNAL", message: "internal error" } }, 500);
  });

  app.get("/health", (c) => c.json({ status: "ok" }));

  app.use("*", async (c, next) => {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(c.req.header("authorization") ?? "");
    if (!timingSafeEqual(sha256(match?.[1] ?? ""), tokenHash)) {
      throw new BridgeError("UNAUTHENTICATED", "this bridge requires BRIDGE_TOKEN");
    }
    await next();
  });

  app.post("/v1/:tool", async (c) => {
    let body: unknown;
    try {
      body = await c.req.json();
    } catch {
      throw new BridgeError("INVALID_INPUT", "the body is not JSON");
    }
    return c.json({ result: (await callTool(c.req.param("tool"), body)) ?? null });
  });

  // MCP over streamable HTTP: one session per harness session, its conversation named by the
  // `x-rakazo-conversation` header at initialize (the MCP session id otherwise).
  app.all("/mcp", async (c) => {
    const sessionId = c.req.header("mcp-session-id");
    if (sessionId) {
      const known = mcpSessions.get(sessionId);
      if (!known) throw new BridgeError("NOT_FOUND", "unknown MCP session");
      return known.transport.handleRequest(c.req.raw);
    }
    const conversationId = c.req.header("x-rakazo-conversation");
    const teamRoot = c.req.header("x-rakazo-team-root");
    const id = randomUUID();
    const session = createMcpSession((name, body) => callTool(name, body), {
      conversationId: conversationId ?? id,
      teamRoot,
    });
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => id,
      onsessioninitialized: (initialized) => {
        mcpSessions.set(initialized, { transport, close: session.close });
      },
      onsessionclosed: async (closed) => {
        const known = mcpSessions.get(closed);
        mcpSessions.delete(closed);
        await known?.close();
      },
    });
    await session.server.connect(transport);
    return transport.handleRequest(c.req.raw);
  });

  return {
    app,
    /** Ends every MCP session (releasing its computers). */
    async close(): Promise<void> {
      const open = [...mcpSessions.values()];
      mcpSessions.clear();
      for (const session of open) await session.close();
    },
  };
}
