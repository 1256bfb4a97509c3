/**
 * The bridge's HTTP surface: `GET /health`, `POST /v1/<tool>` (tools.ts) and MCP over
 * streamable HTTP at `/mcp` (mcp.ts), every route but health behind a client's bridge token
 * (clients.ts). It holds the API's external token and hands it to no one; callers hold only
 * their client's token and the capabilities create returns. It keeps no database and writes
 * nothing to disk.
 */
import { randomUUID } from "node:crypto";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { createExternalClient, type RpcPost } from "@rakazo/client";
import type { BridgeClient } from "@rakazo/config";
import { bodyTooLarge, isBodyTooLarge, limitBody, requireJsonBody } from "@rakazo/http-edge";
import type { Logger } from "@rakazo/log";
import { Hono } from "hono";
import { keptAlivePost } from "./api-transport.ts";
import { ClientTokens } from "./clients.ts";
import { Computers } from "./computers.ts";
import { BridgeError } from "./errors.ts";
import { createMcpSession } from "./mcp.ts";
import { type McpSessionLimits, McpSessions } from "./mcp-sessions.ts";
import { corsHeaders, type OriginPolicy, originAllowed, preflight } from "./origins.ts";
import { runTool } from "./tools.ts";

/**
 * The most a caller may send: a file write holds up to 1 MiB of text, which JSON escaping can
 * grow several times; every other tool's input is small.
 */
const MAX_BODY_BYTES = 8 * 1024 * 1024;

export interface BridgeOptions {
  readonly apiUrl: string;
  /** The API's EXTERNAL_COMPUTER_TOKEN. */
  readonly externalToken: string;
  /** Who may call, each by the SHA-256 of its token (BridgeEnv's `clients`). */
  readonly clients: readonly BridgeClient[];
  /** MCP sessions over HTTP: idle timeout and cap per client (default 900 s, 16). */
  readonly mcp?: Partial<McpSessionLimits>;
  /** Browser origins allowed (origins.ts); default none, loopback origins not allowed either. */
  readonly origins?: Partial<OriginPolicy>;
  /** BRIDGE_KEY_PREFIX: in front of every computer key and screen (scope.ts); default none. */
  readonly keyPrefix?: string | undefined;
  readonly log: Logger;
  /** How an RPC reaches the API; defaults to node:http over kept-alive connections (api-transport.ts). */
  readonly post?: RpcPost;
}

/** Whether the headers declare a body length (without chunked framing) of at most `limit`. */
function declaredWithin(headers: Headers, limit: number): boolean {
  const declared = headers.get("content-length");
  if (declared === null || headers.has("transfer-encoding")) return false;
  const length = Number(declared);
  return Number.isSafeInteger(length) && length >= 0 && length <= limit;
}

/** A JSON-RPC error answer: what an MCP client reads from a refused HTTP request. */
const jsonRpcError = (status: number, code: number, message: string): Response =>
  Response.json({ jsonrpc: "2.0", error: { code, message }, id: null }, { status });

export function createBridge(options: BridgeOptions) {
  const { log } = options;
  const tokens = new ClientTokens(options.clients);
  const limits: McpSessionLimits = {
    idleMs: options.mcp?.idleMs ?? 900_000,
    maxPerClient: options.mcp?.maxPerClient ?? 16,
  };
  const computers = new Computers(
    createExternalClient({
      baseUrl: options.apiUrl,
      token: options.externalToken,
      post: options.post ?? keptAlivePost(),
    }),
    { keyPrefix: options.keyPrefix },
  );
  const origins: OriginPolicy = {
    allowed: options.origins?.allowed ?? [],
    loopback: options.origins?.loopback ?? false,
  };
  const mcpSessions = new McpSessions(limits, log);

  const app = new Hono<{ Variables: { client: string } }>();

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

  // Origin before anything else (origins.ts): a page not allowed gets 403 whatever it sends; an
  // allowed one gets CORS answers, its preflight (which carries no token) answered here.
  app.use("*", async (c, next) => {
    const origin = c.req.header("origin");
    if (!originAllowed(origins, origin)) {
      const message = "this Origin may not call the bridge (BRIDGE_ALLOWED_ORIGINS)";
      return c.req.path === "/mcp"
        ? jsonRpcError(403, -32000, message)
        : c.json({ error: { code: "FORBIDDEN_ORIGIN", message } }, 403);
    }
    if (origin === undefined) return next();
    if (c.req.method === "OPTIONS" && c.req.header("access-control-request-method")) return preflight(origin);
    await next();
    c.res = new Response(c.res.body, c.res);
    for (const [name, value] of Object.entries(corsHeaders(origin))) c.res.headers.set(name, value);
  });

  // Sizes from the headers and chunked bodies counted as read, before the token is even looked
  // at; a body is read only after authentication below. A declared length within the limit is
  // the whole check (Node's parser delivers exactly that many bytes), made here from the headers
  // alone: limitBody first asks the request for its body stream, which turns node-server's
  // lightweight request into a full WHATWG Request for every tool call.
  const limited = limitBody(() => MAX_BODY_BYTES);
  app.use("*", (c, next) => (declaredWithin(c.req.raw.headers, MAX_BODY_BYTES) ? next() : limited(c, next)));

  app.onError((error, c) => {
    if (isBodyTooLarge(error)) return bodyTooLarge(MAX_BODY_BYTES);
    if (error instanceof BridgeError) {
      return c.json({ error: error.toJSON() }, error.status as 400);
    }
    log.error("bridge.unhandled_error", { path: c.req.path, error });
    return c.json({ error: { code: "INTERNAL", message: "internal error" } }, 500);
  });

  app.get("/health", (c) => c.json({ status: "ok" }));

  app.use("*", async (c, next) => {
    const client = tokens.identify(c.req.header("authorization"));
    if (client === undefined) {
      throw new BridgeError("UNAUTHENTICATED", "this bridge requires a client's bridge token");
    }
    c.set("client", client);
    await next();
  });
  // After the token: a stranger learns only that it needs one.
  app.use("*", requireJsonBody());

  app.post("/v1/:tool", async (c) => {
    let body: unknown;
    try {
      body = await c.req.json();
    } catch (error) {
      if (isBodyTooLarge(error)) throw error;
      throw new BridgeError("INVALID_INPUT", "the body is not JSON");
    }
    const tool = runTool(computers.as(c.get("client")), c.req.param("tool"), body);
    return c.json({ result: (await tool) ?? null });
  });

  // MCP over streamable HTTP: one session per harness session, its conversation named by the
  // `x-rakazo-conversation` header at initialize (the MCP session id otherwise), its tools run
  // as the client that opened it (mcp-sessions.ts: ownership, cap, idle expiry).
  app.all("/mcp", async (c) => {
    const client = c.get("client");
    const sessionId = c.req.header("mcp-session-id");
    if (sessionId) {
      // Another client's session answers exactly like an unknown one (the SDK's own answer).
      if (!mcpSessions.holds(sessionId, client)) return jsonRpcError(404, -32001, "Session not found");
      return mcpSessions.serve(sessionId, c.req.raw);
    }
    if (!mcpSessions.hasRoom(client)) {
      return jsonRpcError(
        429,
        -32000,
        `this client has ${limits.maxPerClient} MCP sessions open, the most it may: end one (DELETE) or let one expire`,
      );
    }
    const id = randomUUID();
    const session = createMcpSession((name, body) => runTool(computers.as(client), name, body), {
      conversationId: c.req.header("x-rakazo-conversation") ?? id,
      teamRoot: c.req.header("x-rakazo-team-root"),
    });
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => id,
      onsessionclosed: (closed) => mcpSessions.end(closed),
    });
    mcpSessions.open(id, client, { transport, close: session.close });
    await session.server.connect(transport);
    const response = await mcpSessions.serve(id, c.req.raw);
    // A request that opened no session (not an initialize, or a malformed one) leaves nothing.
    if (transport.sessionId === undefined) await mcpSessions.end(id);
    return response;
  });

  return {
    app,
    /** Ends every MCP session (releasing its computers) and stops the idle sweep. */
    close: () => mcpSessions.close(),
  };
}
