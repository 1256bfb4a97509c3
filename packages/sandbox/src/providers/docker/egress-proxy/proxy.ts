/**
 * The egress proxy: HTTP CONNECT (for TLS and anything tunnelled) and plain-HTTP forwarding,
 * Node builtins only. One per computer, in its own container; the computer reaches it only
 * through a Unix socket (it has no network interface of its own), so this is its one way out.
 * Every request is decided by decide.ts: the name against the policy first, then each resolved
 * address; the upstream connection goes to a checked address, never to a name.
 */
import { lookup as dnsLookup } from "node:dns/promises";
import { createServer, request as httpRequest, type IncomingMessage, type Server } from "node:http";
import { connect as netConnect, type Socket } from "node:net";
import type { Duplex } from "node:stream";
import { parseAddress } from "./address-classes.ts";
import {
  addressChecker,
  type Denial,
  decideTarget,
  type EgressRules,
  type HostDenySource,
  normalizeHost,
  parseAuthority,
  permittedAddresses,
} from "./decide.ts";

type Resolve = (host: string) => Promise<string[]>;

export interface EgressProxyOptions {
  readonly rules: EgressRules;
  /**
   * The host's current addresses, refused like `rules.hostDeny` (production: the watcher's
   * file, host-addresses.ts). Absent: `rules.hostDeny` only.
   */
  readonly hostAddresses?: HostDenySource;
  /** Defaults to the system resolver (all addresses). */
  readonly resolve?: Resolve;
  readonly connectTimeoutMs?: number;
  /**
   * Opens the upstream TCP connection to a checked address. Tests map a (checked, public)
   * address onto a loopback fixture here; production uses `net.connect`.
   */
  readonly connect?: (address: string, port: number) => Socket;
  /** One event per decision: host, port, verdict. Never paths, headers or bodies. */
  readonly log?: (event: Record<string, unknown>) => void;
}

const defaultResolve: Resolve = async (host) => {
  const found = await dnsLookup(host, { all: true, verbatim: true });
  return found.map((entry) => entry.address);
};

const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);

export function createEgressProxy(options: EgressProxyOptions): Server {
  const resolve = options.resolve ?? defaultResolve;
  const checker = addressChecker(options.rules, options.hostAddresses);
  const log = options.log ?? (() => {});
  const timeoutMs = options.connectTimeoutMs ?? 10_000;
  const open = options.connect ?? ((address: string, port: number) => netConnect({ host: address, port }));

  /** The addresses this request may reach, or the reason it may not. */
  const admit = async (host: string, port: number): Promise<{ addresses: string[] } | { denial: Denial }> => {
    const targetDenial = decideTarget(options.rules, host, port);
    if (targetDenial) return { denial: targetDenial };
    const name = normalizeHost(host);
    let resolved: string[];
    try {
      resolved = parseAddress(name) ? [name] : await resolve(name);
    } catch {
      return { denial: "unresolved" };
    }
    const verdict = permittedAddresses(checker, resolved);
    return verdict.denial ? { denial: verdict.denial } : { addresses: verdict.addresses };
  };

  const dial = (addresses: readonly string[], port: number): Promise<Socket> =>
    new Promise((resolveSocket, reject) => {
      const tryAt = (index: number, lastError?: Error): void => {
        const address = addresses[index];
        if (address === undefined) {
          reject(lastError ?? new Error("no address"));
          return;
        }
        const socket = open(address, port);
        socket.setTimeout(timeoutMs, () => socket.destroy(new Error("connect timeout")));
        socket.once("connect", () => {
          socket.setTimeout(0);
          socket.removeAllListeners("error");
          resolveSocket(socket);
        });
        socket.once("error", (error) => tryAt(index + 1, error));
      };
      tryAt(0);
    });

  const server = createServer((req, res) => {
    void (async () => {
      let url: URL;
      try {
        url = new URL(req.url ?? "");
      } catch {
        res
          .writeHead(400, { "content-type": "text/plain" })
          .end("rakazo egress: absolute http:// URL expected\n");
        return;
      }
      if (url.protocol !== "http:") {
        res
          .writeHead(400, { "content-type": "text/plain" })
          .end("rakazo egress: only http:// is forwarded\n");
        return;
      }
      const port = url.port ? Number(url.port) : 80;
      const verdict = await admit(url.hostname, port);
      log({
        event: "egress.request",
        host: url.hostname,
        port,
        verdict: "denial" in verdict ? verdict.denial : "allowed",
      });
      if ("denial" in verdict) {
        res
          .writeHead(403, { "content-type": "text/plain", "x-rakazo-egress": verdict.denial })
          .end(`rakazo egress: ${url.hostname}:${port} refused (${verdict.denial})\n`);
        return;
      }
      forward(req, res, url, port, verdict.addresses);
    })().catch(() => res.destroy());
  });

  const forward = (
    req: IncomingMessage,
    res: import("node:http").ServerResponse,
    url: URL,
    port: number,
    addresses: string[],
  ): void => {
    const headers: Record<string, string | string[]> = {};
    for (const [key, value] of Object.entries(req.headers)) {
      if (value !== undefined && !HOP_BY_HOP.has(key)) headers[key] = value;
    }
    headers.host = url.host;
    const upstream = httpRequest({
      method: req.method,
      path: `${url.pathname}${url.search}`,
      headers,
      setHost: false,
      // Only the checked address is ever connected to.
      createConnection: () => {
        const socket = open(addresses[0] as string, port);
        socket.setTimeout(timeoutMs, () => socket.destroy(new Error("timeout")));
        socket.once("connect", () => socket.setTimeout(0));
        return socket;
      },
    });
    upstream.on("response", (answer) => {
      const out: Record<string, string | string[]> = {};
      for (const [key, value] of Object.entries(answer.headers)) {
        if (value !== undefined && !HOP_BY_HOP.has(key)) out[key] = value;
      }
      res.writeHead(answer.statusCode ?? 502, out);
      answer.pipe(res);
    });
    upstream.on("error", () => {
      if (!res.headersSent)
        res.writeHead(502, { "content-type": "text/plain" }).end("rakazo egress: upstream failed\n");
      else res.destroy();
    });
    req.pipe(upstream);
  };

  server.on("connect", (req: IncomingMessage, client: Duplex, head: Buffer) => {
    client.on("error", () => client.destroy());
    void (async () => {
      const target = parseAuthority(req.url ?? "");
      const verdict = target ? await admit(target.host, target.port) : { denial: "bad_target" as const };
      log({
        event: "egress.connect",
        host: target?.host ?? null,
        port: target?.port ?? null,
        verdict: "denial" in verdict ? verdict.denial : "allowed",
      });
      if ("denial" in verdict || !target) {
        const reason = "denial" in verdict ? verdict.denial : "bad_target";
        client.end(
          `HTTP/1.1 403 Forbidden\r\nX-Rakazo-Egress: ${reason}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`,
        );
        return;
      }
      let upstream: Socket;
      try {
        upstream = await dial(verdict.addresses, target.port);
      } catch {
        client.end("HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        return;
      }
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length > 0) upstream.write(head);
      upstream.on("error", () => client.destroy());
      client.on("close", () => upstream.destroy());
      upstream.on("close", () => client.destroy());
      upstream.pipe(client);
      client.pipe(upstream);
    })().catch(() => client.destroy());
  });
  return server;
}
