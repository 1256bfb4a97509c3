/**
 * The bridge's MCP sessions over streamable HTTP, and what must stay true of them:
 * - a session belongs to the client that opened it: another client's token with its id finds
 *   nothing, exactly like an unknown id;
 * - a client has at most `maxPerClient` open at once (counted from the request that opens one,
 *   so racing initializes cannot pass the cap together);
 * - a session with no request for `idleMs` is ended like a DELETE (its computers released), so
 *   a client that never sends DELETE — or crashed — leaves nothing running. A POST counts as a
 *   request until its response body ends, so a long tool call is never expired mid-call; an
 *   open GET notification stream does not keep a session alive.
 * The sweep runs on an unref'd timer; `close()` stops it and ends every session.
 */
import type { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { Logger } from "@rakazo/log";

export interface McpSessionHandle {
  readonly transport: WebStandardStreamableHTTPServerTransport;
  /** Releases the session's computers and closes its server and transport. */
  close(): Promise<void>;
}

interface Entry {
  readonly client: string;
  readonly session: McpSessionHandle;
  lastActive: number;
  inFlight: number;
}

export interface McpSessionLimits {
  /** A session with no request for this long is ended. */
  readonly idleMs: number;
  readonly maxPerClient: number;
}

export class McpSessions {
  readonly #entries = new Map<string, Entry>();
  readonly #limits: McpSessionLimits;
  readonly #log: Logger;
  readonly #sweep: NodeJS.Timeout;

  constructor(limits: McpSessionLimits, log: Logger) {
    this.#limits = limits;
    this.#log = log;
    // A quarter of the idle time: a session ends at most 25 % late, and a long timeout costs
    // one look every 30 s at most.
    const every = Math.min(Math.max(limits.idleMs / 4, 50), 30_000);
    this.#sweep = setInterval(() => this.#expireIdle(), every);
    this.#sweep.unref();
  }

  /** Whether `client` may open another session. */
  hasRoom(client: string): boolean {
    let open = 0;
    for (const entry of this.#entries.values()) if (entry.client === client) open += 1;
    return open < this.#limits.maxPerClient;
  }

  /** Registers a session before its first request runs (the caller checked `hasRoom`). */
  open(id: string, client: string, session: McpSessionHandle): void {
    this.#entries.set(id, { client, session, lastActive: Date.now(), inFlight: 0 });
  }

  /** Whether `id` is a session of `client`. */
  holds(id: string, client: string): boolean {
    return this.#entries.get(id)?.client === client;
  }

  /** Runs one request on a session (`holds` said yes), counted in flight until its body ends. */
  async serve(id: string, request: Request): Promise<Response> {
    const entry = this.#entries.get(id);
    if (!entry) throw new Error(`no MCP session ${id}`);
    entry.lastActive = Date.now();
    if (request.method !== "POST") return entry.session.transport.handleRequest(request);
    entry.inFlight += 1;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      entry.inFlight -= 1;
      entry.lastActive = Date.now();
    };
    try {
      return whenBodyEnds(await entry.session.transport.handleRequest(request), finish);
    } catch (error) {
      finish();
      throw error;
    }
  }

  /** Ends one session, releasing its computers; ending an ended or unknown one does nothing. */
  async end(id: string): Promise<void> {
    const entry = this.#entries.get(id);
    if (!entry) return;
    this.#entries.delete(id);
    await entry.session.close().catch((error: unknown) => {
      this.#log.warn("bridge.mcp_session_close_failed", { client: entry.client, error });
    });
  }

  /** Stops the sweep and ends every session. */
  async close(): Promise<void> {
    clearInterval(this.#sweep);
    for (const id of [...this.#entries.keys()]) await this.end(id);
  }

  #expireIdle(): void {
    const now = Date.now();
    for (const [id, entry] of this.#entries) {
      if (entry.inFlight > 0 || now - entry.lastActive < this.#limits.idleMs) continue;
      this.#log.info("bridge.mcp_session_expired", { client: entry.client, idleMs: now - entry.lastActive });
      void this.end(id);
    }
  }
}

/** `response` with a body that calls `finish` once it has been read to its end or cancelled. */
function whenBodyEnds(response: Response, finish: () => void): Response {
  if (!response.body) {
    finish();
    return response;
  }
  const reader = response.body.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const next = await reader.read();
        if (next.done) {
          finish();
          controller.close();
        } else controller.enqueue(next.value);
      } catch (error) {
        finish();
        controller.error(error);
      }
    },
    cancel(reason) {
      finish();
      return reader.cancel(reason);
    },
  });
  return new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}
