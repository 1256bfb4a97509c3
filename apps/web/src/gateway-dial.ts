/**
 * The websocket dial to a gateway over a plain socket (a Unix socket, or `http:` TCP), written
 * by hand so the socket can read straight into one fixed buffer (`net.connect({ onread })`):
 * the relay then hands each read of the gateway's frames to the browser without a `Buffer`
 * allocated per read — the stream path allocated one per 64 KiB and cost ~4× the CPU per MiB.
 * The handshake itself is a bounded HTTP/1.1 exchange: request line, headers, the gateway's
 * status line and headers (≤ 16 KiB), the accept value checked.
 */
import net from "node:net";
import { acceptValue, newWebSocketKey } from "./ws-scan.ts";

/** Size of the buffer a dialed socket reads into. */
export const READ_SIZE = 1024 * 1024;
const MAX_RESPONSE_HEAD = 16 * 1024;

/** A socket reading into `block`; once the relay sets `deliver`, each read goes there. */
export interface BlockReads {
  readonly block: Buffer;
  /** Bytes read after the handshake before `deliver` was set (copies: `block` is reused). */
  readonly early: Buffer[];
  /** Takes the first `length` bytes of `block`; false pauses reading until resumed. */
  deliver?: (length: number) => boolean;
}

export type RawDial =
  | { readonly ok: true; readonly socket: net.Socket; readonly reads: BlockReads }
  | { readonly ok: false; readonly status: number; readonly error?: string };

const SAFE_HEADER = /^[\t\x20-\x7e]*$/;

export function dialRaw(
  connect: { readonly path: string } | { readonly host: string; readonly port: number },
  request: { readonly path: string; readonly host: string; readonly headers: Record<string, string> },
  timeoutMs: number,
): { readonly result: Promise<RawDial>; abort(): void } {
  const key = newWebSocketKey();
  const reads: BlockReads = { block: Buffer.allocUnsafe(READ_SIZE), early: [] };
  const received: Buffer[] = [];
  let settle: (dial: RawDial) => void = () => undefined;
  const result = new Promise<RawDial>((resolve) => {
    settle = resolve;
  });
  let settled = false;
  const fail = (status: number, error?: string): void => {
    if (settled) return;
    settled = true;
    clearTimeout(timer);
    socket.destroy();
    settle(error ? { ok: false, status, error } : { ok: false, status });
  };
  const onHandshakeBytes = (): void => {
    const all = Buffer.concat(received);
    const end = all.indexOf("\r\n\r\n");
    if (end < 0) {
      if (all.length > MAX_RESPONSE_HEAD) fail(502, "bad_handshake");
      return;
    }
    const lines = all.subarray(0, end).toString("latin1").split("\r\n");
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? "")?.[1] ?? 0);
    if (status !== 101) {
      fail(status || 502, status ? undefined : "bad_handshake");
      return;
    }
    const accept = lines
      .slice(1)
      .map((line) => /^sec-websocket-accept:\s*(\S+)\s*$/i.exec(line)?.[1])
      .find((value) => value !== undefined);
    if (accept !== acceptValue(key)) {
      fail(502, "bad_handshake");
      return;
    }
    settled = true;
    clearTimeout(timer);
    // Nothing more is read until the relay takes over and resumes.
    socket.pause();
    if (all.length > end + 4) reads.early.push(Buffer.from(all.subarray(end + 4)));
    settle({ ok: true, socket, reads });
  };
  const socket = net.connect({
    ...connect,
    onread: {
      buffer: reads.block,
      callback: (length) => {
        if (reads.deliver) return reads.deliver(length);
        if (settled) {
          reads.early.push(Buffer.from(reads.block.subarray(0, length)));
          return true;
        }
        received.push(Buffer.from(reads.block.subarray(0, length)));
        onHandshakeBytes();
        return true;
      },
    },
  });
  const timer = setTimeout(() => fail(0, "ETIMEDOUT"), timeoutMs);
  socket.on("error", (error: NodeJS.ErrnoException) => fail(0, error.code ?? "error"));
  socket.on("close", () => fail(0, "closed"));
  const headers = {
    ...request.headers,
    host: request.host,
    connection: "Upgrade",
    upgrade: "websocket",
    "sec-websocket-version": "13",
    "sec-websocket-key": key,
  };
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}`);
  if (!lines.every((line) => SAFE_HEADER.test(line)) || !SAFE_HEADER.test(request.path)) {
    queueMicrotask(() => fail(502, "bad_target"));
  } else {
    socket.write(`GET ${request.path} HTTP/1.1\r\n${lines.join("\r\n")}\r\n\r\n`);
  }
  return { result, abort: () => fail(0, "aborted") };
}
