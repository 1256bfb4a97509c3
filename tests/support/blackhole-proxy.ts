/**
 * A loopback TCP relay in front of a test server (the S3 store) that a fault drill can turn into
 * a blackhole: connections are still accepted but nothing is relayed or answered, and the
 * connections open at the switch are cut — what a store behind a dead route or a hung load
 * balancer looks like to a client. `restore()` relays again on the same port.
 */
import { connect, createServer, type Socket } from "node:net";

export interface BlackholeProxy {
  readonly port: number;
  blackhole(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startBlackholeProxy(targetPort: number): Promise<BlackholeProxy> {
  let dark = false;
  const open = new Set<Socket>();
  const server = createServer((client) => {
    open.add(client);
    client.on("close", () => open.delete(client));
    client.on("error", () => {});
    if (dark) return client.resume(); // read and drop, never answer
    const upstream = connect({ host: "127.0.0.1", port: targetPort });
    open.add(upstream);
    upstream.on("close", () => open.delete(upstream));
    upstream.on("error", () => client.destroy());
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const { port } = server.address() as { port: number };
  return {
    port,
    blackhole() {
      dark = true;
      for (const socket of open) socket.destroy();
    },
    restore() {
      dark = false;
    },
    async close() {
      for (const socket of open) socket.destroy();
      await new Promise((done) => server.close(done));
    },
  };
}
