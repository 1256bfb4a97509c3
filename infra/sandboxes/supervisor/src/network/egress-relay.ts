/**
 * The computer's one way out under `egress` / `allowlist`: the computer has no
 * network interface, so browsers and tools talk to a proxy on loopback (RAKAZO_EGRESS_LISTEN,
 * 127.0.0.1:3128) and this relay carries each connection, byte for byte, to the egress proxy's
 * Unix socket (RAKAZO_EGRESS_SOCKET, mounted read-only from the host). Policy is decided by
 * the proxy, outside the computer; a bot that kills or replaces this relay only cuts itself off.
 */
import { connect, createServer, type Server } from "node:net";

export interface EgressRelayConfig {
  /** `host:port` on loopback. */
  readonly listen: string;
  readonly socket: string;
}

export function parseRelayListen(listen: string): { host: string; port: number } {
  const match = /^(127\.0\.0\.1|localhost):(\d{1,5})$/.exec(listen);
  if (!match) throw new Error(`egress relay: ${listen} is not a loopback host:port`);
  return { host: match[1] as string, port: Number(match[2]) };
}

export function startEgressRelay(config: EgressRelayConfig): Promise<Server> {
  const { host, port } = parseRelayListen(config.listen);
  const server = createServer((client) => {
    const upstream = connect(config.socket);
    client.on("error", () => upstream.destroy());
    upstream.on("error", () => client.destroy());
    client.pipe(upstream).pipe(client);
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve(server));
  });
}
