/**
 * A screen connection's bytes once the gateway has admitted it: the desktop's RFB socket is
 * dialled (`dialRfb`) before the viewer gets its 101, and `bridgeRfb` joins the two. Policy
 * (tickets, revocation, expiry) stays in computer-gateway.ts; client input in client-input.ts.
 *
 * Server → client is a pure pass-through (nothing to enforce on what a desktop shows; a view
 * connection's filter only reads the server's handshake). Bytes are read straight into one
 * buffer per connection (`onread`), after `MAX_FRAME_HEADER` spare bytes, and each read leaves
 * as one binary frame written in place (header + payload in a single write): no allocation, copy
 * or concatenation per chunk, and reads as large as the socket has queued instead of 64 KiB.
 */
import net from "node:net";
import type { Duplex } from "node:stream";
import { pipeClientInput } from "./client-input.ts";
import { RfbViewFilter } from "./rfb-filter.ts";
import { CLOSE_POLICY } from "./vocabulary.ts";
import { frameHeader, MAX_FRAME_HEADER, OPCODE, writeFrameHeader } from "./ws-frame.ts";

const READ_SIZE = 256 * 1024;

/** The upstream socket's reader: who receives reads changes when the bridge starts. */
export interface UpstreamReader {
  readonly block: Buffer;
  /** Bytes read before the bridge existed (copied, as `block` is reused). */
  readonly early: Buffer[];
  deliver?: (length: number) => boolean;
}

/** Connects to a desktop's RFB socket; what it sends before `bridgeRfb` is kept for the viewer. */
export function dialRfb(socketPath: string): { upstream: net.Socket; reader: UpstreamReader } {
  const reader: UpstreamReader = { block: Buffer.allocUnsafe(MAX_FRAME_HEADER + READ_SIZE), early: [] };
  const upstream = net.connect({
    path: socketPath,
    onread: {
      buffer: reader.block.subarray(MAX_FRAME_HEADER),
      callback: (length) => {
        if (reader.deliver) return reader.deliver(length);
        reader.early.push(Buffer.from(reader.block.subarray(MAX_FRAME_HEADER, MAX_FRAME_HEADER + length)));
        return true;
      },
    },
  });
  return { upstream, reader };
}

export interface RfbBridgeOptions {
  readonly client: Duplex;
  readonly upstream: net.Socket;
  readonly reader: UpstreamReader;
  /** View connections have their input filtered (`RfbViewFilter`); control passes untouched. */
  readonly view: boolean;
  /** Ends the connection with a websocket close code (the gateway's bookkeeping and logs). */
  end(code: number, reason: string): void;
  dropped(count: number): void;
  isClosed(): boolean;
}

export function bridgeRfb(options: RfbBridgeOptions): void {
  const { client, upstream, reader, end, isClosed } = options;
  if ("setNoDelay" in client && typeof client.setNoDelay === "function") client.setNoDelay(true);
  upstream.setNoDelay(true);

  // While the client socket has not flushed a frame it still references the block, so reading
  // (which would overwrite it) stops until that write completes: backpressure and buffer reuse
  // in one rule.
  const filter = options.view ? new RfbViewFilter() : undefined;
  /** Shows the view filter the server's handshake before the client sees it; false: ended. */
  const watched = (bytes: Buffer): boolean => {
    if (!filter?.watchingServer) return true;
    const error = filter.observeServer(bytes);
    if (error === undefined) return true;
    end(CLOSE_POLICY, "view-only stream not understood");
    return false;
  };
  for (const bytes of reader.early.splice(0)) {
    if (!watched(bytes)) return;
    client.write(Buffer.concat([frameHeader(OPCODE.binary, bytes.length), bytes]));
  }
  const { block } = reader;
  reader.deliver = (length) => {
    if (isClosed()) return false;
    if (!watched(block.subarray(MAX_FRAME_HEADER, MAX_FRAME_HEADER + length))) return false;
    const start = writeFrameHeader(block, MAX_FRAME_HEADER, OPCODE.binary, length);
    let held = false;
    client.write(block.subarray(start, MAX_FRAME_HEADER + length), () => {
      if (held && !isClosed()) upstream.resume();
    });
    if (client.writableLength === 0) return true;
    held = true;
    return false;
  };
  pipeClientInput({ client, upstream, filter, end, dropped: options.dropped, isClosed });

  const gone = (): void => end(1001, "upstream closed");
  upstream.on("end", gone);
  upstream.on("close", gone);
  upstream.on("error", () => undefined);
  client.on("close", () => end(1000, ""));
  client.on("end", () => end(1000, ""));
}
