/**
 * Byte streams for the screen benches and the soak: a Unix socket read directly, or a websocket
 * (the gateway's `/v1/rfb` route, or the web proxy's `/screens/<cap>/websockify`) read by a
 * minimal client on a raw socket — handshake, masked binary frames out, server frames walked
 * header by header with their payloads handed on as views of the read chunks — so a ratio
 * against the direct socket is the path's cost, not a websocket library's.
 */
import { randomBytes } from "node:crypto";
import net from "node:net";

/** One byte stream, direct or through a websocket. */
export interface Stream {
  send(bytes: Buffer): void;
  onData(listener: (chunk: Buffer) => void): void;
  /** Called once when the stream ends or fails after it opened. */
  onClose(listener: (error?: Error) => void): void;
  close(): void;
}

/** A stream over `socket`, and the function that hands it received payload bytes. */
function streamOf(socket: net.Socket, send: (bytes: Buffer) => void) {
  let listener: ((chunk: Buffer) => void) | undefined;
  const early: Buffer[] = [];
  const stream: Stream = {
    send,
    onData: (l) => {
      listener = l;
      for (const chunk of early.splice(0)) l(chunk);
    },
    onClose: (l) => {
      let error: Error | undefined;
      socket.on("error", (e) => (error = e));
      socket.once("close", () => l(error));
    },
    close: () => socket.destroy(),
  };
  const emit = (chunk: Buffer) => (listener ? listener(chunk) : early.push(Buffer.from(chunk)));
  return { stream, emit };
}

export function direct(socketPath: string): Promise<Stream> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(socketPath);
    socket.once("error", reject);
    socket.once("connect", () => {
      socket.off("error", reject);
      socket.setNoDelay(true);
      const { stream, emit } = streamOf(socket, (b) => socket.write(b));
      socket.on("data", emit);
      resolve(stream);
    });
  });
}

export type WebSocketTarget =
  | { readonly socketPath: string; readonly path: string; readonly headers?: Record<string, string> }
  | {
      readonly port: number;
      readonly host: string;
      readonly path: string;
      readonly headers?: Record<string, string>;
    };

/** A websocket opened with a raw socket; rejects with the status line when refused. */
export function viaWebSocketRaw(target: WebSocketTarget): Promise<Stream> {
  return new Promise((resolve, reject) => {
    const socket =
      "socketPath" in target ? net.connect(target.socketPath) : net.connect(target.port, target.host);
    socket.once("error", reject);
    socket.once("connect", () => {
      socket.setNoDelay(true);
      const extra = Object.entries(target.headers ?? {})
        .map(([name, value]) => `${name}: ${value}\r\n`)
        .join("");
      socket.write(
        `GET ${target.path} HTTP/1.1\r\nHost: ${"host" in target ? target.host : "gateway"}\r\n` +
          "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n" +
          `Sec-WebSocket-Key: ${randomBytes(16).toString("base64")}\r\n${extra}\r\n`,
      );
    });
    let head: Buffer | undefined = Buffer.alloc(0);
    let pending = Buffer.alloc(0); // an incomplete frame header
    let remaining = 0; // payload bytes left in the current frame
    let closing = false;
    let emit: (bytes: Buffer) => void = () => undefined;
    const frames = (chunk: Buffer): void => {
      let at = 0;
      while (at < chunk.length) {
        if (remaining > 0) {
          const n = Math.min(remaining, chunk.length - at);
          if (!closing) emit(chunk.subarray(at, at + n));
          remaining -= n;
          at += n;
          continue;
        }
        const take = Math.min(10 - pending.length, chunk.length - at);
        const header =
          pending.length > 0 ? Buffer.concat([pending, chunk.subarray(at, at + take)]) : chunk.subarray(at);
        const before = pending.length;
        if (header.length < 2) {
          pending = Buffer.from(header);
          return;
        }
        const len7 = (header[1] as number) & 0x7f;
        const size = len7 === 126 ? 4 : len7 === 127 ? 10 : 2;
        if (header.length < size) {
          pending = Buffer.from(header.subarray(0, Math.min(header.length, 10)));
          return;
        }
        // A close frame ends the stream; its payload (code, reason) is dropped, not emitted.
        if (((header[0] as number) & 0x0f) === 8) closing = true;
        else if (((header[0] as number) & 0x0f) >= 8) throw new Error("unexpected control frame");
        remaining =
          len7 === 126 ? header.readUInt16BE(2) : len7 === 127 ? Number(header.readBigUInt64BE(2)) : len7;
        at += size - before;
        pending = Buffer.alloc(0);
        if (closing && remaining === 0) socket.end();
      }
      if (closing && remaining === 0) socket.end();
    };
    socket.on("data", (chunk: Buffer) => {
      if (!head) return frames(chunk);
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf("\r\n\r\n");
      if (end < 0) return;
      if (!head.subarray(0, 13).equals(Buffer.from("HTTP/1.1 101 "))) {
        reject(new Error(`refused: ${head.subarray(0, end).toString("latin1").split("\r\n")[0]}`));
        socket.destroy();
        return;
      }
      const rest = head.subarray(end + 4);
      head = undefined;
      socket.off("error", reject);
      const opened = streamOf(socket, (bytes) => {
        const mask = randomBytes(4);
        const size = bytes.length < 126 ? 2 : 4;
        const frame = Buffer.alloc(size + 4 + bytes.length);
        frame[0] = 0x82;
        if (size === 2) frame[1] = 0x80 | bytes.length;
        else {
          frame[1] = 0x80 | 126;
          frame.writeUInt16BE(bytes.length, 2);
        }
        mask.copy(frame, size);
        for (let i = 0; i < bytes.length; i += 1)
          frame[size + 4 + i] = (bytes[i] as number) ^ (mask[i & 3] as number);
        socket.write(frame);
      });
      emit = opened.emit;
      resolve(opened.stream);
      if (rest.length > 0) frames(rest);
    });
  });
}
