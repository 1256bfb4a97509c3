/**
 * Connect protocol v1 with JSON codec, as envd speaks it to the e2b/novita SDKs
 * (docs/providers.md, "Running the emulators"): unary = plain JSON; server streams = `0x00`-flagged envelopes (uint32
 * big-endian length + JSON) and a final `0x02` end-stream envelope carrying `{}` or an error.
 */
import type { ServerResponse } from "node:http";

export type ConnectCode =
  | "invalid_argument"
  | "not_found"
  | "already_exists"
  | "unauthenticated"
  | "unavailable"
  | "deadline_exceeded"
  | "unimplemented"
  | "internal";

const HTTP_STATUS: Record<ConnectCode, number> = {
  invalid_argument: 400,
  not_found: 404,
  already_exists: 409,
  unauthenticated: 401,
  unavailable: 503,
  deadline_exceeded: 504,
  unimplemented: 501,
  internal: 500,
};

export class ConnectError extends Error {
  readonly code: ConnectCode;
  constructor(code: ConnectCode, message: string) {
    super(message);
    this.code = code;
  }
}

/** The one request message of a unary call or of a server stream's envelope. */
export function decodeRequest(body: Buffer, streaming: boolean): unknown {
  if (!streaming) return body.length === 0 ? {} : JSON.parse(body.toString("utf8"));
  if (body.length < 5) throw new ConnectError("invalid_argument", "missing request envelope");
  const length = body.readUInt32BE(1);
  return JSON.parse(body.subarray(5, 5 + length).toString("utf8"));
}

function envelope(message: unknown, flags = 0): Buffer {
  const json = Buffer.from(JSON.stringify(message), "utf8");
  const head = Buffer.alloc(5);
  head.writeUInt8(flags, 0);
  head.writeUInt32BE(json.length, 1);
  return Buffer.concat([head, json]);
}

export function sendUnary(response: ServerResponse, message: unknown): void {
  const body = JSON.stringify(message);
  response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
  response.end(body);
}

export function sendUnaryError(response: ServerResponse, error: ConnectError): void {
  const body = JSON.stringify({ code: error.code, message: error.message });
  response.writeHead(HTTP_STATUS[error.code], {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
  });
  response.end(body);
}

export interface ServerStream {
  send(message: unknown): void;
  end(error?: ConnectError): void;
  readonly closed: boolean;
}

export function openStream(response: ServerResponse): ServerStream {
  response.writeHead(200, { "content-type": "application/connect+json" });
  let closed = false;
  response.on("close", () => {
    closed = true;
  });
  return {
    send(message) {
      if (!closed) response.write(envelope(message));
    },
    end(error) {
      if (closed) return;
      closed = true;
      response.end(envelope(error ? { error: { code: error.code, message: error.message } } : {}, 0x02));
    },
    get closed() {
      return closed;
    },
  };
}
