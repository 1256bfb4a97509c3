/**
 * Walks the websocket frames of a byte stream the screen proxy relays, without copying or
 * re-framing them: it reads frame headers, counts payload bytes off, and keeps only what the
 * proxy acts on — whether the stream sits between frames (where the proxy may add a close frame
 * of its own), the close code of a close frame, and a payload cap. RFC 6455 framing; masked
 * (browser → gateway) and unmasked (gateway → browser) frames alike.
 */
import { createHash, randomBytes } from "node:crypto";

const GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
const CLOSE = 8;
/** Longest header: 2 + 8-byte length + 4-byte mask. */
const MAX_HEADER = 14;

export function acceptValue(key: string): string {
  return createHash("sha1")
    .update(key + GUID)
    .digest("base64");
}

/** A valid `Sec-WebSocket-Key`: base64 of 16 bytes. */
export function validWebSocketKey(key: string | undefined): key is string {
  return typeof key === "string" && /^[A-Za-z0-9+/]{22}==$/.test(key);
}

export function newWebSocketKey(): string {
  return randomBytes(16).toString("base64");
}

/** A close frame; `masked` for one the proxy sends as the gateway's client. */
export function closeFrame(code: number, masked: boolean): Buffer {
  const frame = Buffer.alloc(masked ? 8 : 4);
  frame[0] = 0x80 | CLOSE;
  frame[1] = (masked ? 0x80 : 0) | 2;
  // An all-zero mask leaves the payload as it is, which RFC 6455 allows.
  frame.writeUInt16BE(code, masked ? 6 : 2);
  return frame;
}

export class FrameScanner {
  readonly #header = Buffer.alloc(MAX_HEADER);
  readonly #code = Buffer.alloc(2);
  readonly #maxPayload: number;
  #have = 0;
  #need = 2;
  #left = 0;
  #offset = 0;
  #opcode = 0;
  #masked = false;
  /** The code of the first close frame seen (1005 when it carried none). */
  closeCode: number | undefined;

  constructor(maxPayload = Number.POSITIVE_INFINITY) {
    this.#maxPayload = maxPayload;
  }

  /** Whether everything pushed so far ended on a frame boundary. */
  get atBoundary(): boolean {
    return this.#have === 0 && this.#left === 0;
  }

  /** Reads `chunk`; false when a frame's payload is over the cap (nothing after it is read). */
  push(chunk: Buffer): boolean {
    let at = 0;
    while (at < chunk.length) {
      if (this.#left > 0) {
        const n = Math.min(this.#left, chunk.length - at);
        if (this.#opcode === CLOSE) this.#closePayload(chunk, at, n);
        this.#offset += n;
        this.#left -= n;
        at += n;
        if (this.#left === 0) this.#frameDone();
        continue;
      }
      this.#header[this.#have] = chunk[at] as number;
      this.#have += 1;
      at += 1;
      if (this.#have === 2) {
        const length7 = (this.#header[1] as number) & 0x7f;
        this.#masked = ((this.#header[1] as number) & 0x80) !== 0;
        this.#need = 2 + (length7 === 126 ? 2 : length7 === 127 ? 8 : 0) + (this.#masked ? 4 : 0);
      }
      if (this.#have < this.#need) continue;
      const length = this.#length();
      if (length > this.#maxPayload) return false;
      this.#opcode = (this.#header[0] as number) & 0x0f;
      this.#left = length;
      this.#offset = 0;
      this.#have = 0;
      this.#need = 2;
      if (length === 0) this.#frameDone();
    }
    return true;
  }

  #length(): number {
    const length7 = (this.#header[1] as number) & 0x7f;
    if (length7 === 126) return this.#header.readUInt16BE(2);
    if (length7 === 127) return this.#header.readUInt32BE(2) * 2 ** 32 + this.#header.readUInt32BE(6);
    return length7;
  }

  /** Keeps the first two payload bytes of a close frame, unmasked: its code. */
  #closePayload(chunk: Buffer, at: number, n: number): void {
    for (let k = 0; k < n && this.#offset + k < 2; k += 1) {
      const position = this.#offset + k;
      // The mask is the header's last four bytes.
      const mask = this.#masked ? (this.#header[this.#headerLength() - 4 + (position % 4)] as number) : 0;
      this.#code[position] = (chunk[at + k] as number) ^ mask;
    }
  }

  #headerLength(): number {
    const length7 = (this.#header[1] as number) & 0x7f;
    return 2 + (length7 === 126 ? 2 : length7 === 127 ? 8 : 0) + (this.#masked ? 4 : 0);
  }

  #frameDone(): void {
    if (this.#opcode !== CLOSE || this.closeCode !== undefined) return;
    this.closeCode = this.#offset >= 2 ? this.#code.readUInt16BE(0) : 1005;
  }
}
