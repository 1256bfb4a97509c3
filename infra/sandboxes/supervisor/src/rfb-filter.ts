/**
 * View-only enforcement on the client→server RFB stream (SCR-2), done in the gateway rather
 * than the viewer: the gateway parses every client message and forwards only those that cannot
 * change the desktop. KeyEvent, PointerEvent, ClientCutText and every other input or
 * desktop-changing message (xvp, SetDesktopSize, gii, QEMU) are dropped. A message the filter
 * cannot frame ends the connection (fail closed), because after it the stream cannot be parsed.
 *
 * The handshake is parsed too: RFB 3.7/3.8 only (what noVNC and x11vnc speak), security types
 * None and VNC Authentication; ClientInit's shared flag is forced on, so a viewer can never
 * disconnect the people controlling the screen.
 */

export const RFB_CLIENT = {
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

type Phase = "version" | "security" | "vncauth" | "init" | "messages" | "failed";

/**
 * Length of the client message at the head of `buf`, or 0 when more bytes are needed to
 * know it, or -1 when the type is unknown or malformed.
 */
export function clientMessageLength(buf: Buffer): number {
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

export class RfbViewFilter {
  #phase: Phase = "version";
  #pending: Buffer = Buffer.alloc(0);

  /** Feeds client bytes; returns what to forward. After an `error`, everything is refused. */
  push(chunk: Buffer): FilterOutput {
    const forward: Buffer[] = [];
    const dropped: number[] = [];
    if (this.#phase === "failed") return { forward, dropped, error: "stream already failed" };
    let buf = this.#pending.length > 0 ? Buffer.concat([this.#pending, chunk]) : chunk;
    const fail = (error: string): FilterOutput => {
      this.#phase = "failed";
      this.#pending = Buffer.alloc(0);
      return { forward, dropped, error };
    };
    for (;;) {
      if (this.#phase === "version") {
        if (buf.length < 12) break;
        const version = buf.subarray(0, 12).toString("latin1");
        if (!/^RFB 003\.00[78]\n$/.test(version))
          return fail(`unsupported RFB version ${JSON.stringify(version)}`);
        forward.push(buf.subarray(0, 12));
        buf = buf.subarray(12);
        this.#phase = "security";
      } else if (this.#phase === "security") {
        if (buf.length < 1) break;
        const type = buf[0] as number;
        if (type !== 1 && type !== 2) return fail(`unsupported security type ${type}`);
        forward.push(buf.subarray(0, 1));
        buf = buf.subarray(1);
        this.#phase = type === 2 ? "vncauth" : "init";
      } else if (this.#phase === "vncauth") {
        if (buf.length < 16) break;
        forward.push(buf.subarray(0, 16));
        buf = buf.subarray(16);
        this.#phase = "init";
      } else if (this.#phase === "init") {
        if (buf.length < 1) break;
        forward.push(Buffer.from([1])); // shared: never kick the other clients
        buf = buf.subarray(1);
        this.#phase = "messages";
      } else {
        const length = clientMessageLength(buf);
        if (length < 0) return fail(`unknown or malformed client message type ${buf[0]}`);
        if (length === 0 || buf.length < length) break;
        const type = buf[0] as number;
        if (VIEW_ALLOWED.has(type)) forward.push(buf.subarray(0, length));
        else dropped.push(type);
        buf = buf.subarray(length);
      }
    }
    // Copy the remainder: `buf` may be a view of the caller's chunk.
    this.#pending = Buffer.from(buf);
    return { forward, dropped };
  }
}
