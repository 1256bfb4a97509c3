/** Small HTTP helpers shared by the emulators (node:http, no framework). */
import { createHash, timingSafeEqual } from "node:crypto";
import type http from "node:http";

/** The largest request body an emulator reads (JSON, uploads); a larger one is an error. */
const BODY_LIMIT_BYTES = 64 * 1024 * 1024;

export async function readBody(
  request: http.IncomingMessage,
  limitBytes = BODY_LIMIT_BYTES,
): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > limitBytes) throw new Error("request body too large");
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** The JSON body, `{}` when empty; malformed JSON throws. */
export async function readJson(request: http.IncomingMessage): Promise<unknown> {
  const body = await readBody(request);
  if (body.length === 0) return {};
  return JSON.parse(body.toString("utf8")) as unknown;
}

export function sendJson(
  response: http.ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    ...headers,
  });
  response.end(text);
}

/**
 * Whether the caller gave up on the call before its answer (timed out, aborted, disconnected):
 * a create that sees this removes the machine it made, since nobody will learn its id.
 */
export function callerGone(response: http.ServerResponse): boolean {
  return response.destroyed || !response.socket || response.socket.destroyed;
}

/** An answer with no body (and no content type). */
export function sendEmpty(response: http.ServerResponse, status: number): void {
  response.writeHead(status).end();
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Single-quotes a value for a POSIX shell. */
export function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

/** Constant-time equality of two secrets of any length (both are hashed first). */
export function sameSecret(given: string, expected: string): boolean {
  return timingSafeEqual(
    createHash("sha256").update(given).digest(),
    createHash("sha256").update(expected).digest(),
  );
}

/** Whether the request carries `Authorization: Bearer <key>`. */
export function hasBearer(request: http.IncomingMessage, key: string): boolean {
  const auth = request.headers.authorization ?? "";
  return auth.startsWith("Bearer ") && sameSecret(auth.slice(7), key);
}

/** Whether the request carries `key` in header `name` (lower case). */
export function hasKeyHeader(request: http.IncomingMessage, name: string, key: string): boolean {
  const given = request.headers[name];
  return typeof given === "string" && sameSecret(given, key);
}

export interface RequestRecord {
  readonly method: string;
  readonly path: string;
  readonly status: number;
}

/** Appends the call to `log` once its answer is sent (method, path without query, status). */
export function recordRequest(
  log: RequestRecord[],
  request: http.IncomingMessage,
  response: http.ServerResponse,
  path: string,
): void {
  response.on("finish", () => log.push({ method: request.method ?? "", path, status: response.statusCode }));
}
