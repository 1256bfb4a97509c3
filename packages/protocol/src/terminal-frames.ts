/**
 * The browser terminal's frame protocol (TRM-4, TRM-8): one module for the supervisor's PTY
 * server, the fake provider's emulated shell and the web client. No Node API (Uint8Array,
 * DataView, TextEncoder only), so the supervisor bundle and the browser both import it.
 *
 * Every websocket message is binary; its first byte names the frame:
 *   0x00 data    — both ways: keystrokes to the shell, output from it (raw bytes).
 *   0x01 resize  — client → server: u16 cols, u16 rows (big-endian).
 *   0x02 exit    — server → client: i32 exit code (-1: none), then the signal name (UTF-8, may be empty).
 *   0x03 error   — server → client: u8 code length, code (ASCII), then the message (UTF-8).
 * Anything else (an empty message, an unknown kind, a short resize) is a protocol error: the
 * receiver closes with CLOSE_POLICY. The server closes the connection after exit or error.
 */

/** The gateway's websocket route for a `terminal` capability (TRM-4); `/v1/rfb` is the screen's. */
export const TERMINAL_GATEWAY_PATH = "/v1/pty";
/** Close code: the terminal server stopped (control released, screen torn down) — TRM-6. */
export const CLOSE_TERMINAL_STOPPED = 4004;

export const TERMINAL_FRAME = { data: 0, resize: 1, exit: 2, error: 3 } as const;

/** Limits both ends enforce. */
export const TERMINAL_LIMITS = {
  /** The largest message either side sends or accepts. */
  maxFrameBytes: 1024 * 1024,
  maxCols: 1000,
  maxRows: 500,
} as const;

/** Why the server refused or ended a shell (the `error` frame's code). */
export const TERMINAL_ERROR_CODES = [
  /** The shell could not start (no PTY helper, exec failure). */
  "spawn_failed",
  /** The computer's limit of open shells is reached. */
  "too_many_sessions",
  /** The client sent a frame this protocol does not define. */
  "bad_frame",
  /** The terminal server stops: control released, capability expired or revoked, screen gone. */
  "stopped",
] as const;
export type TerminalErrorCode = (typeof TERMINAL_ERROR_CODES)[number];

export type TerminalFrame =
  | { readonly type: "data"; readonly data: Uint8Array }
  | { readonly type: "resize"; readonly cols: number; readonly rows: number }
  | { readonly type: "exit"; readonly code: number | null; readonly signal: string | null }
  | { readonly type: "error"; readonly code: TerminalErrorCode; readonly message: string };

export class TerminalFrameError extends Error {
  override readonly name = "TerminalFrameError";
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The frame as one websocket message. */
export function encodeTerminalFrame(frame: TerminalFrame): Uint8Array {
  switch (frame.type) {
    case "data": {
      const out = new Uint8Array(1 + frame.data.byteLength);
      out[0] = TERMINAL_FRAME.data;
      out.set(frame.data, 1);
      return out;
    }
    case "resize": {
      checkSize(frame.cols, frame.rows);
      const out = new Uint8Array(5);
      const view = new DataView(out.buffer);
      out[0] = TERMINAL_FRAME.resize;
      view.setUint16(1, frame.cols);
      view.setUint16(3, frame.rows);
      return out;
    }
    case "exit": {
      const signal = encoder.encode(frame.signal ?? "");
      const out = new Uint8Array(5 + signal.byteLength);
      out[0] = TERMINAL_FRAME.exit;
      new DataView(out.buffer).setInt32(1, frame.code ?? -1);
      out.set(signal, 5);
      return out;
    }
    case "error": {
      const code = encoder.encode(frame.code);
      const message = encoder.encode(frame.message);
      const out = new Uint8Array(2 + code.byteLength + message.byteLength);
      out[0] = TERMINAL_FRAME.error;
      out[1] = code.byteLength;
      out.set(code, 2);
      out.set(message, 2 + code.byteLength);
      return out;
    }
  }
}

/** A data frame of text (what a keyboard sends) or bytes. */
export function terminalData(data: string | Uint8Array): Uint8Array {
  return encodeTerminalFrame({ type: "data", data: typeof data === "string" ? encoder.encode(data) : data });
}

/**
 * One websocket message as a frame; throws TerminalFrameError for anything the protocol does not
 * define. A data frame's bytes are a view into `message`, not a copy.
 */
export function decodeTerminalFrame(message: Uint8Array): TerminalFrame {
  if (message.byteLength === 0) throw new TerminalFrameError("empty terminal frame");
  if (message.byteLength > TERMINAL_LIMITS.maxFrameBytes) {
    throw new TerminalFrameError(`terminal frame over ${TERMINAL_LIMITS.maxFrameBytes} bytes`);
  }
  const view = new DataView(message.buffer, message.byteOffset, message.byteLength);
  switch (message[0]) {
    case TERMINAL_FRAME.data:
      return { type: "data", data: message.subarray(1) };
    case TERMINAL_FRAME.resize: {
      if (message.byteLength !== 5) throw new TerminalFrameError("a resize frame is 5 bytes");
      const cols = view.getUint16(1);
      const rows = view.getUint16(3);
      checkSize(cols, rows);
      return { type: "resize", cols, rows };
    }
    case TERMINAL_FRAME.exit: {
      if (message.byteLength < 5) throw new TerminalFrameError("an exit frame is at least 5 bytes");
      const code = view.getInt32(1);
      const signal = decoder.decode(message.subarray(5));
      return { type: "exit", code: code < 0 ? null : code, signal: signal || null };
    }
    case TERMINAL_FRAME.error: {
      const length = message[1] ?? 0;
      if (message.byteLength < 2 + length) throw new TerminalFrameError("a short error frame");
      const code = decoder.decode(message.subarray(2, 2 + length));
      if (!(TERMINAL_ERROR_CODES as readonly string[]).includes(code)) {
        throw new TerminalFrameError(`unknown terminal error code ${JSON.stringify(code)}`);
      }
      return {
        type: "error",
        code: code as TerminalErrorCode,
        message: decoder.decode(message.subarray(2 + length)),
      };
    }
    default:
      throw new TerminalFrameError(`unknown terminal frame kind ${message[0]}`);
  }
}

function checkSize(cols: number, rows: number): void {
  const ok =
    Number.isInteger(cols) &&
    Number.isInteger(rows) &&
    cols >= 1 &&
    rows >= 1 &&
    cols <= TERMINAL_LIMITS.maxCols &&
    rows <= TERMINAL_LIMITS.maxRows;
  if (!ok) throw new TerminalFrameError(`terminal size ${cols}x${rows} is out of range`);
}
