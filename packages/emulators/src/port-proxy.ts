/**
 * A hosted port of an emulated machine: one loopback listener (port 0) that stands for the
 * service's per-port origin (Boat's `https://<subdomain>-<port>.on.boat.dev`, Daytona's
 * `https://<port>-<id>.<proxyDomain>`). Each request is checked by `admit` (the service's token
 * rule), stripped of the credential, and carried over a fresh byte stream into the machine
 * (`MachinePool.connectPort`), HTTP and websocket upgrades alike.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";

export interface PortListenerOptions {
  /** Opens a byte stream to the port inside the machine; throws when the machine is down. */
  readonly connect: () => Promise<Duplex>;
  /**
   * Decides from the request whether it may pass; returns the path to forward (credential
   * removed) or a refusal status.
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

export async function startPortListener(options: PortListenerOptions): Promise<PortListener> {
  const strip = options.stripHeaders ?? [];
  const sockets = new Set<Duplex>();
  const track = <T extends Duplex>(socket: T): T => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    return socket;
  };

  const upstream = (request: http.IncomingMessage, path: string, stream: Duplex) =>
    http.request({
      method: request.method,
      path,
      headers: forwardHeaders(request, strip),
      // No agent: with createConnection alone, Node uses exactly this stream.
      createConnection: () => track(stream) as never,
    });

  const server = http.createServer((request, response) => {
    const decision = options.admit(request);
    if (!decision.ok) {
      response.writeHead(decision.status, { "content-type": "text/plain" }).end("refused\n");
      request.resume();
      return;
    }
    options.connect().then(
      (stream) => {
        const outgoing = upstream(request, decision.path, stream);
        outgoing.on("response", (answer) => {
          response.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(response);
        });
        outgoing.on("error", () => {
          if (!response.headersSent) response.writeHead(502).end("upstream failed\n");
          else response.destroy();
        });
        request.pipe(outgoing);
      },
      () => response.writeHead(502, { "content-type": "text/plain" }).end("machine unreachable\n"),
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
        const outgoing = upstream(request, decision.path, stream);
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
