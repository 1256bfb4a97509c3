/**
 * The part of RFC 6455 the screen gateway needs, as a server: the handshake accept value,
 * server frame headers (never masked), and a parser for client frames (always masked).
 * RFB is a byte stream, so message boundaries do not matter: binary and continuation payloads
 * are handed on as they arrive.
 */
import { createHash } from "node:crypto";
import type { Duplex } from "node:stream";

const GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
export const OPCODE = { continuation: 0, text: 1, binary: 2, close: 8, ping: 9, pong: 10 } as const;
/** Larger client frames are refused (1009): a viewer's messages are tiny. */
const MAX_CLIENT_FRAME = 16 * 1024 * 1024;

function acceptValue(key: string): string {
  return createHash("sha1")
    .update(key + GUID)
    .digest("base64");
}

/** The server's 101 answer to a websocket handshake carrying `key`. */
export function switchingProtocols(key: string): string {
  return (
    "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
    `Sec-WebSocket-Accept: ${acceptValue(key)}\r\n\r\n`
  );
}

/** A valid `Sec-WebSocket-Key`: base64 of 16 bytes. */
export function validWebSocketKey(key: string | undefined): key is string {
  return typeof key === "string" && /^[A-Za-z0-9+/]{22}==$/.test(key);
}

/** Longest server frame header (no mask): 2 + 8-byte extended length. */
export const MAX_FRAME_HEADER = 10;

function frameHeaderLength(length: number): number {
  return length < 126 ? 2 : length < 65_536 ? 4 : 10;
}

/**
 * Writes a final, unmasked frame header for a `length`-byte payload into `target` so that it
 * ends at `end` (where the payload starts); returns where it starts. Lets a caller read the
 * payload into a buffer after `MAX_FRAME_HEADER` spare bytes and send header and payload as
 * one contiguous write, without allocating or copying.
 */
export function writeFrameHeader(target: Buffer, end: number, opcode: number, length: number): number {
  const start = end - frameHeaderLength(length);
  target[start] = 0x80 | opcode;
  if (length < 126) {
    target[start + 1] = length;
  } else if (length < 65_536) {
    target[start + 1] = 126;
    target.writeUInt16BE(length, start + 2);
  } else {
    target[start + 1] = 127;
    target.writeUInt32BE(Math.floor(length / 2 ** 32), start + 2);
    target.writeUInt32BE(length >>> 0, start + 6);
  }
  return start;
}

export function frameHeader(opcode: number, length: number): Buffer {
  const header = Buffer.alloc(frameHeaderLength(length));
  writeFrameHeader(header, header.length, opcode, length);
  return header;
}

function closeFrame(code: number, reason = ""): Buffer {
  const body = Buffer.alloc(2 + Buffer.byteLength(reason));
  body.writeUInt16BE(code, 0);
  body.write(reason, 2);
  return Buffer.concat([frameHeader(OPCODE.close, body.length), body]);
}

/**
 * Ends a websocket from the server side: a close frame with `code` and `reason` as the last
 * write, then the socket is destroyed a second later whether or not the client answered (a
 * client that never reads must not hold it). Nothing happens to a socket already ended.
 */
export function closeWebSocket(client: Duplex, code: number, reason: string): void {
  if (client.destroyed || client.writableEnded) return;
  client.end(closeFrame(code, reason));
  setTimeout(() => client.destroy(), 1000).unref();
}

interface ClientFrame {
  readonly opcode: number;
  /** Set on the last piece of a frame whose FIN bit is set. */
  readonly fin: boolean;
  /**
   * Unmasked payload. Data frames (binary, text, continuation) arrive in pieces as their bytes
   * do (RFB is a byte stream); control frames (≤ 125 bytes) arrive whole.
   */
  readonly payload: Buffer;
}

export type ParseResult =
  | { readonly frames: ClientFrame[]; readonly error?: undefined }
  | { readonly frames: ClientFrame[]; readonly error: { readonly code: number; readonly reason: string } };

/** Longest client frame header: 2 + 8-byte length + 4-byte mask. */
const MAX_CLIENT_HEADER = 14;

/**
 * Streams client frames: holds at most one header (14 bytes) and one control frame (125 bytes)
 * between pushes. Data payloads are unmasked in place (a pushed chunk is the parser's to change;
 * pieces are views of it) and handed on as they arrive, so a large frame
 * sent in many small segments is never re-assembled or re-copied (re-concatenating the pending
 * bytes on every push would make a slow 16 MiB frame cost quadratic time).
 */
export class ClientFrameParser {
  readonly #header = Buffer.alloc(MAX_CLIENT_HEADER);
  #headerLength = 0;
  /** The frame whose payload is being read, if any. */
  #frame: { opcode: number; fin: boolean; mask: Buffer; remaining: number; seen: number } | undefined;
  /** A control frame's payload, gathered whole (≤ 125 bytes). */
  #control: Buffer[] = [];
  #failed: ParseResult["error"];

  push(chunk: Buffer): ParseResult {
    const frames: ClientFrame[] = [];
    if (this.#failed) return { frames, error: this.#failed };
    const fail = (code: number, reason: string): ParseResult => {
      this.#failed = { code, reason };
      return { frames, error: this.#failed };
    };
    let offset = 0;
    for (;;) {
      const frame = this.#frame;
      if (frame) {
        const n = Math.min(frame.remaining, chunk.length - offset);
        // Unmasked in place: the chunk is this parser's to change, and a view costs no copy.
        const piece = chunk.subarray(offset, offset + n);
        unmask(piece, frame.mask, frame.seen);
        offset += n;
        frame.remaining -= n;
        frame.seen += n;
        const done = frame.remaining === 0;
        if (frame.opcode >= 8) {
          this.#control.push(Buffer.from(piece));
          if (done) frames.push({ opcode: frame.opcode, fin: true, payload: Buffer.concat(this.#control) });
        } else if (n > 0 || done) {
          frames.push({ opcode: frame.opcode, fin: done && frame.fin, payload: piece });
        }
        if (!done) break;
        this.#frame = undefined;
        this.#control = [];
        continue;
      }
      if (offset >= chunk.length) break;
      // Header: copy only what this header still needs, at most 14 bytes.
      const want = this.#headerNeeds();
      const n = Math.min(want - this.#headerLength, chunk.length - offset);
      chunk.copy(this.#header, this.#headerLength, offset, offset + n);
      this.#headerLength += n;
      offset += n;
      if (this.#headerLength < 2) continue;
      const head = this.#header;
      const b0 = head[0] as number;
      const b1 = head[1] as number;
      // Checked as soon as the first two bytes are in, before waiting for the rest.
      if (b0 & 0x70) return fail(1002, "reserved bits set");
      if (!(b1 & 0x80)) return fail(1002, "client frames must be masked");
      if (this.#headerLength < this.#headerNeeds()) continue;
      const opcode = b0 & 0x0f;
      let length = b1 & 0x7f;
      let at = 2;
      if (length === 126) {
        length = head.readUInt16BE(2);
        at = 4;
      } else if (length === 127) {
        const big = head.readBigUInt64BE(2);
        if (big > BigInt(MAX_CLIENT_FRAME)) return fail(1009, "frame too large");
        length = Number(big);
        at = 10;
      }
      if (length > MAX_CLIENT_FRAME) return fail(1009, "frame too large");
      if (opcode >= 8 && (length > 125 || !(b0 & 0x80))) return fail(1002, "invalid control frame");
      this.#frame = {
        opcode,
        fin: (b0 & 0x80) !== 0,
        mask: Buffer.from(head.subarray(at, at + 4)),
        remaining: length,
        seen: 0,
      };
      this.#headerLength = 0;
    }
    return { frames };
  }

  /** Header bytes needed given what is held: 2, then 2 + extended length + 4 (mask). */
  #headerNeeds(): number {
    if (this.#headerLength < 2) return 2;
    const length = (this.#header[1] as number) & 0x7f;
    return (length === 126 ? 4 : length === 127 ? 10 : 2) + 4;
  }
}

/** XORs `piece` with the frame's mask, `seen` bytes into the payload. */
function unmask(piece: Buffer, mask: Buffer, seen: number): void {
  for (let i = 0; i < piece.length; i += 1) {
    piece[i] = (piece[i] as number) ^ (mask[(seen + i) & 3] as number);
  }
}
