/**
 * The part of RFC 6455 the screen gateway needs, as a server: the handshake accept value,
 * server frame headers (never masked), and a parser for client frames (always masked).
 * RFB is a byte stream, so message boundaries do not matter: binary and continuation payloads
 * are handed on as they arrive.
 */
import { createHash } from "node:crypto";

const GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
export const OPCODE = { continuation: 0, text: 1, binary: 2, close: 8, ping: 9, pong: 10 } as const;
/** Larger client frames are refused (1009): a viewer's messages are tiny. */
export const MAX_CLIENT_FRAME = 16 * 1024 * 1024;

export function acceptValue(key: string): string {
  return createHash("sha1")
    .update(key + GUID)
    .digest("base64");
}

/** A valid `Sec-WebSocket-Key`: base64 of 16 bytes. */
export function validWebSocketKey(key: string | undefined): key is string {
  return typeof key === "string" && /^[A-Za-z0-9+/]{22}==$/.test(key);
}

/** Longest server frame header (no mask): 2 + 8-byte extended length. */
export const MAX_FRAME_HEADER = 10;

export function frameHeaderLength(length: number): number {
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

export function closeFrame(code: number, reason = ""): Buffer {
  const body = Buffer.alloc(2 + Buffer.byteLength(reason));
  body.writeUInt16BE(code, 0);
  body.write(reason, 2);
  return Buffer.concat([frameHeader(OPCODE.close, body.length), body]);
}

export interface ClientFrame {
  readonly opcode: number;
  readonly fin: boolean;
  readonly payload: Buffer;
}

export type ParseResult =
  | { readonly frames: ClientFrame[]; readonly error?: undefined }
  | { readonly frames: ClientFrame[]; readonly error: { readonly code: number; readonly reason: string } };

export class ClientFrameParser {
  #pending: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): ParseResult {
    let buf = this.#pending.length > 0 ? Buffer.concat([this.#pending, chunk]) : chunk;
    const frames: ClientFrame[] = [];
    for (;;) {
      if (buf.length < 2) break;
      const b0 = buf[0] as number;
      const b1 = buf[1] as number;
      if (b0 & 0x70) return { frames, error: { code: 1002, reason: "reserved bits set" } };
      if (!(b1 & 0x80)) return { frames, error: { code: 1002, reason: "client frames must be masked" } };
      const opcode = b0 & 0x0f;
      let length = b1 & 0x7f;
      let offset = 2;
      if (length === 126) {
        if (buf.length < 4) break;
        length = buf.readUInt16BE(2);
        offset = 4;
      } else if (length === 127) {
        if (buf.length < 10) break;
        const big = buf.readBigUInt64BE(2);
        if (big > BigInt(MAX_CLIENT_FRAME))
          return { frames, error: { code: 1009, reason: "frame too large" } };
        length = Number(big);
        offset = 10;
      }
      if (length > MAX_CLIENT_FRAME) return { frames, error: { code: 1009, reason: "frame too large" } };
      if (opcode >= 8 && (length > 125 || !(b0 & 0x80))) {
        return { frames, error: { code: 1002, reason: "invalid control frame" } };
      }
      if (buf.length < offset + 4 + length) break;
      const mask = buf.subarray(offset, offset + 4);
      const payload = Buffer.from(buf.subarray(offset + 4, offset + 4 + length));
      for (let i = 0; i < payload.length; i += 1) {
        payload[i] = (payload[i] as number) ^ (mask[i & 3] as number);
      }
      frames.push({ opcode, fin: (b0 & 0x80) !== 0, payload });
      buf = buf.subarray(offset + 4 + length);
    }
    this.#pending = Buffer.from(buf);
    return { frames };
  }
}
