/**
 * A fake RFB 3.8 server on a Unix socket, for gateway tests and benchmarks: security None, a
 * 64×48 desktop, and a record of every client message after ClientInit. `push` sends raw bytes
 * to every client; `echo: true` sends back whatever a client sends after the handshake.
 */
import { rmSync } from "node:fs";
import net from "node:net";

export interface FakeRfbServer {
  readonly path: string;
  /** Client bytes received after the handshake, concatenated per client. */
  readonly received: Buffer[];
  readonly clients: Set<net.Socket>;
  /** ClientInit shared flags seen. */
  readonly sharedFlags: number[];
  push(bytes: Buffer): void;
  close(): Promise<void>;
}

export function serverInit(name = "fake"): Buffer {
  const head = Buffer.alloc(24);
  head.writeUInt16BE(64, 0);
  head.writeUInt16BE(48, 2);
  // 32 bpp, depth 24, little endian, true colour, max 255, shifts 16/8/0.
  Buffer.from([32, 24, 0, 1, 0, 255, 0, 255, 0, 255, 16, 8, 0, 0, 0, 0]).copy(head, 4);
  head.writeUInt32BE(name.length, 20);
  return Buffer.concat([head, Buffer.from(name)]);
}

export async function startFakeRfb(path: string, options: { echo?: boolean } = {}): Promise<FakeRfbServer> {
  rmSync(path, { force: true });
  const received: Buffer[] = [];
  const clients = new Set<net.Socket>();
  const sharedFlags: number[] = [];
  const server = net.createServer((socket) => {
    clients.add(socket);
    socket.setNoDelay(true);
    socket.on("error", () => undefined);
    socket.on("close", () => clients.delete(socket));
    const index = received.push(Buffer.alloc(0)) - 1;
    let phase: "version" | "security" | "init" | "messages" = "version";
    let pending = Buffer.alloc(0);
    socket.write("RFB 003.008\n");
    socket.on("data", (chunk: Buffer) => {
      if (phase === "messages") {
        received[index] = Buffer.concat([received[index] as Buffer, chunk]);
        if (options.echo) socket.write(chunk);
        return;
      }
      pending = Buffer.concat([pending, chunk]);
      for (;;) {
        if (phase === "version" && pending.length >= 12) {
          pending = pending.subarray(12);
          socket.write(Buffer.from([1, 1])); // one type: None
          phase = "security";
        } else if (phase === "security" && pending.length >= 1) {
          pending = pending.subarray(1);
          socket.write(Buffer.from([0, 0, 0, 0])); // SecurityResult OK
          phase = "init";
        } else if (phase === "init" && pending.length >= 1) {
          sharedFlags.push(pending[0] as number);
          pending = pending.subarray(1);
          socket.write(serverInit());
          phase = "messages";
          if (pending.length > 0) {
            received[index] = Buffer.concat([received[index] as Buffer, pending]);
            if (options.echo) socket.write(pending);
          }
          return;
        } else return;
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(path, resolve));
  return {
    path,
    received,
    clients,
    sharedFlags,
    push(bytes) {
      for (const client of clients) client.write(bytes);
    },
    async close() {
      for (const client of clients) client.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The client side of the handshake a viewer sends: version, security None, ClientInit(shared=0). */
export const CLIENT_HANDSHAKE = Buffer.concat([
  Buffer.from("RFB 003.008\n"),
  Buffer.from([1]),
  Buffer.from([0]),
]);
/** Bytes the server sends during the handshake before any framebuffer data. */
export const SERVER_HANDSHAKE_BYTES = 12 + 2 + 4 + serverInit().length;

export const rfbMessages = {
  keyEvent: (down: boolean, keysym: number): Buffer => {
    const b = Buffer.alloc(8);
    b[0] = 4;
    b[1] = down ? 1 : 0;
    b.writeUInt32BE(keysym, 4);
    return b;
  },
  pointerEvent: (mask: number, x: number, y: number): Buffer => {
    const b = Buffer.alloc(6);
    b[0] = 5;
    b[1] = mask;
    b.writeUInt16BE(x, 2);
    b.writeUInt16BE(y, 4);
    return b;
  },
  clientCutText: (text: string): Buffer => {
    const b = Buffer.alloc(8);
    b[0] = 6;
    b.writeInt32BE(text.length, 4);
    return Buffer.concat([b, Buffer.from(text, "latin1")]);
  },
  updateRequest: (incremental: boolean): Buffer => {
    const b = Buffer.alloc(10);
    b[0] = 3;
    b[1] = incremental ? 1 : 0;
    b.writeUInt16BE(64, 6);
    b.writeUInt16BE(48, 8);
    return b;
  },
};
