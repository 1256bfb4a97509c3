/**
 * The client → desktop half of a gateway connection: websocket frames in, RFB bytes out, with
 * view-only policy (`RfbViewFilter`) applied in between. Everything a viewer sends is hostile
 * input to the process that serves every desktop of the computer, so this half must stay cheap
 * whatever arrives:
 * - Frames and RFB messages are parsed as streams: nothing is re-assembled or re-copied, and a
 *   dropped message's bytes are only counted off.
 * - Work per event-loop turn is bounded: a read is handled `SLICE_BYTES` at a time, and the
 *   client socket stays paused until the loop has turned (libuv would otherwise hand over up to
 *   32 queued reads in a row, and a flood of 1-byte frames would hold the loop for hundreds of ms).
 * - Backpressure: reading stops while the desktop's socket has not drained.
 */
import type net from "node:net";
import type { Duplex } from "node:stream";
import type { RfbViewFilter } from "./rfb-filter.ts";
import { CLOSE_POLICY } from "./vocabulary.ts";
import { ClientFrameParser, frameHeader, OPCODE } from "./ws-frame.ts";

/** Client bytes handled per event-loop turn (~1–2 ms of CPU even when every frame is 1 byte). */
const SLICE_BYTES = 8 * 1024;

export interface ClientInputOptions {
  readonly client: Duplex;
  readonly upstream: net.Socket;
  /** A view connection's filter (the gateway feeds it the server's handshake too); none for control. */
  readonly filter: RfbViewFilter | undefined;
  /** Ends the connection with a websocket close code. */
  end(code: number, reason: string): void;
  /** Input messages the view filter dropped. */
  dropped(count: number): void;
  isClosed(): boolean;
}

export function pipeClientInput(options: ClientInputOptions): void {
  const { client, upstream } = options;
  const parser = new ClientFrameParser();
  const { filter } = options;
  let waitingDrain = false;
  let busy = false;
  const resume = (): void => {
    if (!waitingDrain && !busy && !options.isClosed()) client.resume();
  };
  upstream.on("drain", () => {
    waitingDrain = false;
    resume();
  });

  /** Handles one slice; false when the connection ended. */
  const handle = (slice: Buffer): boolean => {
    const parsed = parser.push(slice);
    for (const frame of parsed.frames) {
      if (frame.opcode === OPCODE.binary || frame.opcode === OPCODE.continuation) {
        let out: Buffer[] = [frame.payload];
        if (filter) {
          const filtered = filter.push(frame.payload);
          if (filtered.dropped.length > 0) options.dropped(filtered.dropped.length);
          if (filtered.error) {
            options.end(CLOSE_POLICY, "view-only stream not understood");
            return false;
          }
          out = filtered.forward;
        }
        for (const bytes of out) {
          if (!upstream.write(bytes)) waitingDrain = true;
        }
      } else if (frame.opcode === OPCODE.ping) {
        client.write(Buffer.concat([frameHeader(OPCODE.pong, frame.payload.length), frame.payload]));
      } else if (frame.opcode === OPCODE.close) {
        const code = frame.payload.length >= 2 ? frame.payload.readUInt16BE(0) : 1000;
        options.end(code >= 1000 && code < 5000 && code !== 1005 ? code : 1000, "");
        return false;
      } else if (frame.opcode === OPCODE.text) {
        options.end(1003, "binary frames only");
        return false;
      }
    }
    if (parsed.error) {
      options.end(parsed.error.code, parsed.error.reason);
      return false;
    }
    return true;
  };

  const work = (chunk: Buffer, offset: number): void => {
    if (options.isClosed()) return;
    const end = Math.min(chunk.length, offset + SLICE_BYTES);
    // One writev for the pieces of this slice (the filter hands on message pieces as views).
    upstream.cork();
    const alive = handle(chunk.subarray(offset, end));
    upstream.uncork();
    if (!alive) return;
    if (end < chunk.length) {
      setImmediate(() => work(chunk, end));
      return;
    }
    setImmediate(() => {
      busy = false;
      resume();
    });
  };

  client.on("data", (chunk: Buffer) => {
    if (options.isClosed()) return;
    busy = true;
    client.pause();
    work(chunk, 0);
  });
}
