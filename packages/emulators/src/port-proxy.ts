/**
 * Hosted ports of emulated machines (CMP-8 / PRV-1: the emulators stand in for the providers'
 * edge proxies).
 *
 * `forwardPinned` carries a client's HTTP requests into a machine as a real edge proxy does: one
 * upstream stream (`docker exec socat`, ~50–100 ms to open) per client connection, machine and
 * port, reused by that connection's keep-alive requests. What must stay true:
 * - a request goes only down a stream of the target it was admitted for (the key); the E2B
 *   emulator serves every sandbox on one origin, so one client connection may carry requests for
 *   several machines, and one machine's requests must never reach another;
 * - admission (tokens, the machine's running state) is the caller's, per request; a pinned
 *   stream skips only the connect;
 * - a stream the machine closed or broke is dropped, and the next request opens a fresh one;
 *   the client connection closing destroys its streams.
 *
 * `startPortListener` is one loopback listener (port 0) standing for the service's per-port
 * origin (Boat's `https://<subdomain>-<port>.on.boat.dev`, Daytona's
 * `https://<port>-<id>.<proxyDomain>`): each request is checked by `admit` (the service's token
 * rule and the machine's state), stripped of the credential and forwarded pinned; a websocket
 * upgrade gets a stream of its own for its lifetime.
 */
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { Duplex } from "node:stream";

// ------------------------------------------------------------------ pinned upstream streams

/**
 * Connection-scoped headers (RFC 9110 §7.6.1): whether the pinned stream persists is the
 * proxy's business, not the client's, and upstream's say on it is not the client's either.
 */
const HOP_BY_HOP = new Set(["connection", "keep-alive"]);

function withoutHopByHop(
  headers: http.IncomingHttpHeaders | http.OutgoingHttpHeaders,
): http.OutgoingHttpHeaders {
  const kept: http.OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !HOP_BY_HOP.has(name)) kept[name] = value;
  }
  return kept;
}

/**
 * A pinned stream is done once either side ends: the machine closed it, or the agent ended it
 * after a `connection: close` answer. A plain Duplex stays open half-closed (unlike a net.Socket),
 * and the agent keeps an idle stream until its 'close'; without this a later request would be
 * written to a dead stream and wait forever. The error listener covers the moment between a
 * response and the agent taking the stream back, when nobody else listens.
 */
function retireWhenDone(stream: Duplex): void {
  const retire = () => stream.destroy();
  stream.once("end", retire);
  stream.once("finish", retire);
  stream.on("error", retire);
}

/** Bytes from the machine while no request is outstanding would be read as the next answer. */
function dropOnIdleData(this: Duplex): void {
  this.destroy();
}

/**
 * Holds at most one stream to one target. Node 24's Agent uses net.Socket-only API in
 * `keepSocketAlive` (setKeepAlive, unref, setTimeout), which is replaced, and in `reuseSocket`
 * (ref), which the stream is given as a no-op — it holds no event-loop handle — so that Node's
 * own reuseSocket still removes the error listener it put on the idle stream. Node guards an
 * idle socket against unsolicited data through its `_handle`; a Duplex has none, so a 'data'
 * listener does it while the stream is idle.
 */
class PinnedAgent extends http.Agent {
  readonly #connect: () => Promise<Duplex>;
  #destroyed = false;

  constructor(connect: () => Promise<Duplex>) {
    super({ keepAlive: true, maxSockets: 1, maxFreeSockets: 1 });
    this.#connect = connect;
  }

  override createConnection(
    _options: http.ClientRequestArgs,
    callback?: (error: Error | null, stream: Duplex) => void,
  ): undefined {
    this.#connect().then(
      (stream) => {
        // The client went away while the machine was being reached: nobody would release it.
        if (this.#destroyed) {
          stream.destroy();
          callback?.(new Error("client connection closed"), stream);
          return;
        }
        retireWhenDone(stream);
        Object.assign(stream, { ref: () => stream });
        callback?.(null, stream);
      },
      (error: Error) => callback?.(error, undefined as never),
    );
    return undefined;
  }

  override keepSocketAlive(stream: Duplex): boolean {
    stream.on("data", dropOnIdleData);
    return true;
  }

  override reuseSocket(stream: Duplex, request: http.ClientRequest): void {
    stream.off("data", dropOnIdleData);
    super.reuseSocket(stream, request);
  }

  override destroy(): void {
    this.#destroyed = true;
    super.destroy();
  }
}

/** Per client connection, one agent per target key; dropped with the connection. */
const pinned = new WeakMap<Socket, Map<string, PinnedAgent>>();

function agentFor(client: Socket, key: string, connect: () => Promise<Duplex>): PinnedAgent {
  let agents = pinned.get(client);
  if (!agents) {
    const fresh = new Map<string, PinnedAgent>();
    client.once("close", () => {
      for (const agent of fresh.values()) agent.destroy();
    });
    pinned.set(client, fresh);
    agents = fresh;
  }
  let agent = agents.get(key);
  if (!agent) {
    agent = new PinnedAgent(connect);
    agents.set(key, agent);
  }
  return agent;
}

export interface PinnedTarget {
  /**
   * Names one machine and port (`<machine>:<port>`): requests of one client connection share a
   * stream only when their keys are equal, so a key must never name two targets.
   */
  readonly key: string;
  /** Opens a stream to the target; called only when this client connection has none to it. */
  readonly connect: () => Promise<Duplex>;
  /** What to forward, credential already removed. */
  readonly path: string;
  readonly headers: http.OutgoingHttpHeaders;
}

/**
 * Forwards an admitted HTTP request over the client connection's pinned stream to the target.
 * `fail` answers when no response came (the machine unreachable, the stream broken); once the
 * answer has started, a failure cuts the client's response.
 */
export function forwardPinned(
  request: http.IncomingMessage,
  response: http.ServerResponse,
  target: PinnedTarget,
  fail: (error: Error) => void,
): void {
  const upstream = http.request(
    {
      agent: agentFor(request.socket, target.key, target.connect),
      method: request.method,
      path: target.path,
      headers: withoutHopByHop(target.headers),
    },
    (answer) => {
      response.writeHead(answer.statusCode ?? 502, withoutHopByHop(answer.headers));
      answer.pipe(response);
    },
  );
  upstream.on("error", (error) => {
    if (!response.headersSent) fail(error);
    else response.destroy();
  });
  request.pipe(upstream);
}

// ------------------------------------------------------------------ per-port listener

export interface PortListenerOptions {
  /** Opens a byte stream to the port inside the machine; throws when the machine is down. */
  readonly connect: () => Promise<Duplex>;
  /**
   * Decides from the request whether it may pass — the service's token rule and whether the
   * machine is running, since a pinned stream skips `connect` — and returns the path to forward
   * (credential removed) or a refusal status.
   */
  readonly admit: (
    request: http.IncomingMessage,
  ) => { ok: true; path: string } | { ok: false; status: number };
  /** Header names removed before forwarding (lower case), e.g. the preview-token header. */
  readonly stripHeaders?: readonly string[];
}

export interface PortListener {
  readonly url: string;
  close(): Promise<void>;
}

function forwardHeaders(request: http.IncomingMessage, strip: readonly string[]): http.OutgoingHttpHeaders {
  const headers: http.OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (!strip.includes(name) && value !== undefined) headers[name] = value;
  }
  return headers;
}

/** The listener's single target: every pinned stream of one of its connections goes there. */
const LISTENER_TARGET = "listener";

export async function startPortListener(options: PortListenerOptions): Promise<PortListener> {
  const strip = options.stripHeaders ?? [];
  const sockets = new Set<Duplex>();
  const track = <T extends Duplex>(socket: T): T => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    return socket;
  };

  const server = http.createServer((request, response) => {
    const decision = options.admit(request);
    if (!decision.ok) {
      response.writeHead(decision.status, { "content-type": "text/plain" }).end("refused\n");
      request.resume();
      return;
    }
    forwardPinned(
      request,
      response,
      {
        key: LISTENER_TARGET,
        connect: options.connect,
        path: decision.path,
        headers: forwardHeaders(request, strip),
      },
      (error) =>
        response.writeHead(502, { "content-type": "text/plain" }).end(`upstream failed: ${error.message}\n`),
    );
  });

  server.on("upgrade", (request, client: Duplex, head: Buffer) => {
    track(client);
    const decision = options.admit(request);
    if (!decision.ok) {
      client.end(`HTTP/1.1 ${decision.status} Refused\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
      return;
    }
    options.connect().then(
      (stream) => {
        const outgoing = http.request({
          method: request.method,
          path: decision.path,
          headers: forwardHeaders(request, strip),
          // No agent: with createConnection alone, Node uses exactly this stream.
          createConnection: () => track(stream) as never,
        });
        outgoing.on("upgrade", (answer, machine: Duplex, machineHead: Buffer) => {
          track(machine);
          const lines = [`HTTP/1.1 ${answer.statusCode} ${answer.statusMessage}`];
          for (let i = 0; i < answer.rawHeaders.length; i += 2) {
            lines.push(`${answer.rawHeaders[i]}: ${answer.rawHeaders[i + 1]}`);
          }
          client.write(`${lines.join("\r\n")}\r\n\r\n`);
          if (machineHead.length > 0) client.write(machineHead);
          if (head.length > 0) machine.write(head);
          machine.pipe(client).on("error", () => machine.destroy());
          client.pipe(machine).on("error", () => client.destroy());
          machine.on("close", () => client.destroy());
          client.on("close", () => machine.destroy());
        });
        outgoing.on("response", (answer) => {
          client.end(`HTTP/1.1 ${answer.statusCode} Upgrade Refused\r\ncontent-length: 0\r\n\r\n`);
        });
        outgoing.on("error", () => client.destroy());
        outgoing.end();
      },
      () => client.end("HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n"),
    );
  });

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    async close() {
      for (const socket of sockets) socket.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
