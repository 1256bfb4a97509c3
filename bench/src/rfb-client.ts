/**
 * A minimal RFB 3.8 viewer on a `Stream` (rfb-stream.ts), for the screen-path bench and the soak:
 * security None (what x11vnc `-nopw` offers, through the gateway too), 32-bit true colour, raw
 * encoding only, so every rectangle's size is known from its header and its pixels are skipped
 * without a copy. Updates are reported as counts (rectangles, bytes), never as pixels.
 */
import type { Stream } from "./rfb-stream.ts";

export interface RfbUpdate {
  readonly rects: number;
  /** Pixel bytes of the update's rectangles. */
  readonly bytes: number;
}

export interface RfbSession {
  readonly width: number;
  readonly height: number;
  /** Every byte received since the stream opened. */
  readonly received: () => number;
  /** FramebufferUpdateRequest; the whole screen unless a rectangle is given. */
  request(incremental: boolean, rect?: { x: number; y: number; w: number; h: number }): void;
  key(keysym: number, down: boolean): void;
  pointer(x: number, y: number, buttons: number): void;
  /** Resolves with the next complete framebuffer update. */
  nextUpdate(): Promise<RfbUpdate>;
  /** Every complete update, as it arrives. */
  onUpdate(listener: (update: RfbUpdate) => void): void;
  close(): void;
}

const BYTES_PER_PIXEL = 4;

/** SetPixelFormat: 32 bpp, depth 24, little-endian true colour, 8 bits a channel. */
function setPixelFormat(): Buffer {
  const m = Buffer.alloc(20);
  m[0] = 0;
  m.set([32, 24, 0, 1], 4);
  m.writeUInt16BE(255, 8);
  m.writeUInt16BE(255, 10);
  m.writeUInt16BE(255, 12);
  m.set([16, 8, 0], 14);
  return m;
}

/** The queue of received bytes: small headers are copied out, pixel bodies skipped in place. */
class Bytes {
  #chunks: Buffer[] = [];
  length = 0;
  push(chunk: Buffer): void {
    this.#chunks.push(chunk);
    this.length += chunk.length;
  }
  take(n: number): Buffer {
    const out = Buffer.allocUnsafe(n);
    let at = 0;
    while (at < n) {
      const head = this.#chunks[0] as Buffer;
      const k = Math.min(head.length, n - at);
      head.copy(out, at, 0, k);
      at += k;
      if (k === head.length) this.#chunks.shift();
      else this.#chunks[0] = head.subarray(k);
    }
    this.length -= n;
    return out;
  }
  skip(n: number): number {
    let done = 0;
    while (done < n && this.#chunks.length > 0) {
      const head = this.#chunks[0] as Buffer;
      const k = Math.min(head.length, n - done);
      done += k;
      if (k === head.length) this.#chunks.shift();
      else this.#chunks[0] = head.subarray(k);
    }
    this.length -= done;
    return done;
  }
}

export function openRfb(stream: Stream, options: { shared?: boolean } = {}): Promise<RfbSession> {
  return new Promise((resolve, reject) => {
    const bytes = new Bytes();
    let received = 0;
    type Step = { need: number; on: (b: Buffer) => void };
    let step: Step;
    let skipping = 0;
    let rectsLeft = 0;
    let update = { rects: 0, bytes: 0 };
    let failed: Error | undefined;
    const waiters: { resolve: (u: RfbUpdate) => void; reject: (e: Error) => void }[] = [];
    const listeners: ((u: RfbUpdate) => void)[] = [];
    const fail = (error: Error) => {
      failed ??= error;
      reject(error);
      for (const w of waiters.splice(0)) w.reject(error);
      stream.close();
    };
    const finishUpdate = () => {
      const done = update;
      update = { rects: 0, bytes: 0 };
      for (const l of listeners) l(done);
      for (const w of waiters.splice(0)) w.resolve(done);
      step = message;
    };
    const rect: Step = {
      need: 12,
      on: (b) => {
        const [w, h, encoding] = [b.readUInt16BE(4), b.readUInt16BE(6), b.readInt32BE(8)];
        if (encoding !== 0) return fail(new Error(`unexpected encoding ${encoding}`));
        skipping = w * h * BYTES_PER_PIXEL;
        update.rects += 1;
        update.bytes += skipping;
        rectsLeft -= 1;
        if (rectsLeft === 0 && skipping === 0) finishUpdate();
      },
    };
    /** A message header of `need` bytes, then a body of `size(header)` bytes skipped. */
    const skipThen = (need: number, size: (header: Buffer) => number): Step => ({
      need,
      on: (header) => {
        skipping = size(header);
        step = message;
      },
    });
    const message: Step = {
      need: 1,
      on: (b) => {
        const type = b[0];
        if (type === 0)
          step = {
            need: 3,
            on: (h) => {
              rectsLeft = h.readUInt16BE(1);
              if (rectsLeft === 0) finishUpdate();
              else step = rect;
            },
          };
        else if (type === 1) step = skipThen(5, (h) => h.readUInt16BE(3) * 6);
        else if (type === 3) step = skipThen(7, (h) => h.readUInt32BE(3));
        else if (type !== 2) fail(new Error(`unexpected server message ${type}`));
      },
    };
    let width = 0;
    let height = 0;
    const send = (m: Buffer) => stream.send(m);
    const session = (): RfbSession => ({
      width,
      height,
      received: () => received,
      request(incremental, r = { x: 0, y: 0, w: width, h: height }) {
        const m = Buffer.alloc(10);
        m[0] = 3;
        m[1] = incremental ? 1 : 0;
        m.writeUInt16BE(r.x, 2);
        m.writeUInt16BE(r.y, 4);
        m.writeUInt16BE(r.w, 6);
        m.writeUInt16BE(r.h, 8);
        send(m);
      },
      key(keysym, down) {
        const m = Buffer.alloc(8);
        m[0] = 4;
        m[1] = down ? 1 : 0;
        m.writeUInt32BE(keysym, 4);
        send(m);
      },
      pointer(x, y, buttons) {
        const m = Buffer.alloc(6);
        m[0] = 5;
        m[1] = buttons;
        m.writeUInt16BE(x, 2);
        m.writeUInt16BE(y, 4);
        send(m);
      },
      nextUpdate: () =>
        failed
          ? Promise.reject(failed)
          : new Promise<RfbUpdate>((resolve, reject) => waiters.push({ resolve, reject })),
      onUpdate: (l) => listeners.push(l),
      close: () => stream.close(),
    });
    step = {
      need: 12,
      on: (version) => {
        if (!version.toString("latin1").startsWith("RFB 003.")) return fail(new Error("not an RFB server"));
        send(Buffer.from("RFB 003.008\n"));
        step = {
          need: 1,
          on: (count) => {
            const n = count[0] as number;
            if (n === 0) return fail(new Error("server refused the connection"));
            step = {
              need: n,
              on: (types) => {
                if (!types.includes(1)) return fail(new Error(`no security type None in ${[...types]}`));
                send(Buffer.from([1]));
                step = {
                  need: 4,
                  on: (result) => {
                    if (result.readUInt32BE(0) !== 0) return fail(new Error("security handshake failed"));
                    send(Buffer.from([options.shared === false ? 0 : 1]));
                    step = {
                      need: 24,
                      on: (init) => {
                        width = init.readUInt16BE(0);
                        height = init.readUInt16BE(2);
                        step = {
                          need: init.readUInt32BE(20),
                          on: () => {
                            send(setPixelFormat());
                            send(Buffer.from([2, 0, 0, 1, 0, 0, 0, 0])); // SetEncodings: raw
                            step = message;
                            resolve(session());
                          },
                        };
                      },
                    };
                  },
                };
              },
            };
          },
        };
      },
    };
    stream.onClose((error) => fail(error ?? new Error("stream closed")));
    stream.onData((chunk) => {
      received += chunk.length;
      bytes.push(chunk);
      while (!failed) {
        if (skipping > 0) {
          skipping -= bytes.skip(skipping);
          if (skipping > 0) return;
          if (step === rect && rectsLeft === 0) finishUpdate();
          continue;
        }
        if (bytes.length < step.need) return;
        const current = step;
        current.on(current.need === 0 ? Buffer.alloc(0) : bytes.take(current.need));
      }
    });
  });
}
