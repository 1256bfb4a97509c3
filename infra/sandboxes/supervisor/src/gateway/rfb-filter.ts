/**
 * View-only enforcement on the client→server RFB stream (SCR-2), done in the gateway rather
 * than the viewer: the gateway parses every client message and forwards only those that cannot
 * change the desktop. KeyEvent, PointerEvent, ClientCutText and every other input or
 * desktop-changing message (xvp, SetDesktopSize, gii, QEMU) are dropped. A message the filter
 * cannot frame ends the connection (fail closed), because after it the stream cannot be parsed.
 *
 * The handshake is parsed too: RFB 3.3, 3.7 and 3.8, security types None and VNC
 * Authentication; ClientInit's shared flag is forced on, so a viewer can never disconnect the
 * people controlling the screen. In 3.7/3.8 the client picks the security type (one byte the
 * filter reads); in 3.3 the server picks it (a u32 after the versions), so the filter reads the
 * server's first 16 bytes too (`observeServer`, called before they reach the client). A 3.3
 * client sends nothing until it has that type, so client bytes before it end the connection:
 * the filter never guesses how the next bytes are framed.
 *
 * The filter streams: it never holds more than a message header (`MAX_HELD` bytes). Once a
 * header tells a message's length, an allowed message's bytes are forwarded as they arrive and
 * a dropped message's bytes are counted off and discarded. A view client announcing a 16 MiB
 * ClientCutText therefore costs the supervisor nothing but the bytes it actually sends, and no
 * push copies data it saw earlier (a filter that re-concatenated its pending buffer on every
 * message would let a cut-text flood stall the supervisor for seconds).
 */

const RFB_CLIENT = {
  SetPixelFormat: 0,
  SetEncodings: 2,
  FramebufferUpdateRequest: 3,
  KeyEvent: 4,
  PointerEvent: 5,
  ClientCutText: 6,
  EnableContinuousUpdates: 150,
  ClientFence: 248,
  Xvp: 250,
  SetDesktopSize: 251,
  Gii: 253,
  Qemu: 255,
} as const;

/** Messages a view-only client may send: none of them changes what is on the screen. */
const VIEW_ALLOWED = new Set<number>([
  RFB_CLIENT.SetPixelFormat,
  RFB_CLIENT.SetEncodings,
  RFB_CLIENT.FramebufferUpdateRequest,
  RFB_CLIENT.EnableContinuousUpdates,
  RFB_CLIENT.ClientFence,
]);

const MAX_CUT_TEXT = 16 * 1024 * 1024;

export interface FilterOutput {
  /** Bytes to forward to the server, in order. */
  readonly forward: Buffer[];
  /** Message types dropped by this push. */
  readonly dropped: number[];
  /** Set when the stream cannot be parsed any further: close the connection. */
  readonly error?: string;
}

type Phase = "version" | "security" | "server-security" | "vncauth" | "init" | "messages" | "failed";

/** The server's version (12 bytes) and, in RFB 3.3, the security type it chose (u32). */
const SERVER_HEAD = 16;

/**
 * Length of the client message at the head of `buf`, or 0 when more bytes are needed to
 * know it, or -1 when the type is unknown or malformed.
 */
function clientMessageLength(buf: Buffer): number {
  if (buf.length < 1) return 0;
  const type = buf[0] as number;
  const need = (n: number, then: () => number): number => (buf.length < n ? 0 : then());
  switch (type) {
    case RFB_CLIENT.SetPixelFormat:
      return 20;
    case RFB_CLIENT.SetEncodings:
      return need(4, () => 4 + 4 * buf.readUInt16BE(2));
    case RFB_CLIENT.FramebufferUpdateRequest:
      return 10;
    case RFB_CLIENT.KeyEvent:
      return 8;
    case RFB_CLIENT.PointerEvent:
      return 6;
    case RFB_CLIENT.ClientCutText:
      return need(8, () => {
        // Negative lengths are the extended clipboard's; the magnitude is the payload size.
        const length = Math.abs(buf.readInt32BE(4));
        return length > MAX_CUT_TEXT ? -1 : 8 + length;
      });
    case RFB_CLIENT.EnableContinuousUpdates:
      return 10;
    case RFB_CLIENT.ClientFence:
      return need(9, () => {
        const length = buf[8] as number;
        return length > 64 ? -1 : 9 + length;
      });
    case RFB_CLIENT.Xvp:
      return 4;
    case RFB_CLIENT.SetDesktopSize:
      return need(8, () => 8 + 16 * (buf[6] as number));
    case RFB_CLIENT.Gii:
      return need(4, () => 4 + ((buf[1] as number) & 0x80 ? buf.readUInt16BE(2) : buf.readUInt16LE(2)));
    case RFB_CLIENT.Qemu:
      return need(2, () => {
        if (buf[1] === 0) return 12; // extended key event
        if (buf[1] === 1) return need(4, () => (buf.readUInt16BE(2) === 2 ? 10 : 4)); // audio
        return -1;
      });
    default:
      return -1;
  }
}

/** The most a filter holds between pushes: the longest header it needs to size a message. */
export const MAX_HELD = 16;

/** Bytes each handshake phase needs before it can be checked and forwarded. */
const HANDSHAKE_BYTES = { version: 12, security: 1, vncauth: 16, init: 1 } as const;

export class RfbViewFilter {
  #phase: Phase = "version";
  /** Header bytes seen so far of the next handshake step or message (never more than MAX_HELD). */
  readonly #held = Buffer.alloc(MAX_HELD);
  #heldLength = 0;
  /** Bytes of the current allowed message still to forward as they arrive. */
  #pass = 0;
  /** Bytes of the current dropped message still to discard. */
  #skip = 0;
  /** The server's first bytes, kept until RFB 3.3's security type is known. */
  readonly #server = Buffer.alloc(SERVER_HEAD);
  #serverLength = 0;
  /** Set once the server's type made the stream unusable; reported on the next client push. */
  #serverError: string | undefined;

  /** Whether `observeServer` still needs server bytes (only during an RFB 3.3 handshake). */
  get watchingServer(): boolean {
    return this.#serverLength < SERVER_HEAD && this.#phase !== "failed" && this.#phase !== "messages";
  }

  /**
   * Feeds server → client bytes, before the client gets them; only the first 16 are read. Returns
   * an error when the connection must end (a 3.3 server that picked a type the filter cannot
   * follow).
   */
  observeServer(chunk: Buffer): string | undefined {
    if (this.#serverLength < SERVER_HEAD) {
      const n = Math.min(SERVER_HEAD - this.#serverLength, chunk.length);
      chunk.copy(this.#server, this.#serverLength, 0, n);
      this.#serverLength += n;
    }
    if (this.#phase === "server-security" && this.#serverLength >= SERVER_HEAD) {
      const type = this.#server.readUInt32BE(12);
      if (type === 1) this.#phase = "init";
      else if (type === 2) this.#phase = "vncauth";
      else {
        // 0 is the server's refusal (a reason follows, then it closes); others are unknown.
        this.#phase = "failed";
        this.#serverError = `unsupported RFB 3.3 security type ${type}`;
        return this.#serverError;
      }
    }
    return undefined;
  }

  /** Feeds client bytes; returns what to forward. After an `error`, everything is refused. */
  push(chunk: Buffer): FilterOutput {
    const forward: Buffer[] = [];
    const dropped: number[] = [];
    if (this.#phase === "failed")
      return { forward, dropped, error: this.#serverError ?? "stream already failed" };
    if (this.#phase === "server-security" && chunk.length > 0) {
      this.#phase = "failed";
      return { forward, dropped, error: "RFB 3.3 client sent before the server chose security" };
    }
    const fail = (error: string): FilterOutput => {
      this.#phase = "failed";
      this.#heldLength = 0;
      return { forward, dropped, error };
    };
    let offset = 0;
    while (offset < chunk.length) {
      if (this.#skip > 0) {
        const n = Math.min(this.#skip, chunk.length - offset);
        this.#skip -= n;
        offset += n;
        continue;
      }
      if (this.#pass > 0) {
        const n = Math.min(this.#pass, chunk.length - offset);
        forward.push(chunk.subarray(offset, offset + n));
        this.#pass -= n;
        offset += n;
        continue;
      }
      if (this.#phase === "server-security")
        return fail("RFB 3.3 client sent before the server chose security");
      if (this.#phase !== "messages") {
        const phase = this.#phase as keyof typeof HANDSHAKE_BYTES;
        const need = HANDSHAKE_BYTES[phase];
        const n = Math.min(need - this.#heldLength, chunk.length - offset);
        chunk.copy(this.#held, this.#heldLength, offset, offset + n);
        this.#heldLength += n;
        offset += n;
        if (this.#heldLength < need) break;
        const step = Buffer.from(this.#held.subarray(0, need));
        this.#heldLength = 0;
        if (phase === "version") {
          const version = step.toString("latin1");
          if (!/^RFB 003\.00[378]\n$/.test(version))
            return fail(`unsupported RFB version ${JSON.stringify(version)}`);
          forward.push(step);
          // In 3.3 the server answers the version with its chosen type (`observeServer`); the
          // client's next bytes are refused until then (the loop's first check).
          this.#phase = version === "RFB 003.003\n" ? "server-security" : "security";
        } else if (phase === "security") {
          const type = step[0] as number;
          if (type !== 1 && type !== 2) return fail(`unsupported security type ${type}`);
          forward.push(step);
          this.#phase = type === 2 ? "vncauth" : "init";
        } else if (phase === "vncauth") {
          forward.push(step);
          this.#phase = "init";
        } else {
          forward.push(Buffer.from([1])); // shared: never kick the other clients
          this.#phase = "messages";
        }
        continue;
      }
      // A message header: take bytes one at a time until its length is known (at most 9).
      this.#held[this.#heldLength] = chunk[offset] as number;
      this.#heldLength += 1;
      offset += 1;
      const head = this.#held.subarray(0, this.#heldLength);
      const length = clientMessageLength(head);
      if (length < 0) return fail(`unknown or malformed client message type ${head[0]}`);
      if (length === 0) {
        if (this.#heldLength >= MAX_HELD) return fail("client message header too long");
        continue;
      }
      const type = head[0] as number;
      if (VIEW_ALLOWED.has(type)) {
        forward.push(Buffer.from(head));
        this.#pass = length - this.#heldLength;
      } else {
        dropped.push(type);
        this.#skip = length - this.#heldLength;
      }
      this.#heldLength = 0;
    }
    return { forward, dropped };
  }
}
