/**
 * Body limits that hold before any byte of the body is read. A declared length over the limit
 * is refused from the headers alone; a chunked body is counted as the handler pulls it, one
 * chunk per pull, so nothing is buffered ahead of the handler (hono's own `bodyLimit` reads the
 * whole stream into a queue up front, which is what let unauthenticated chunked bodies pile up).
 * A handler that never reads (a refused token) never causes a read at all.
 */
import type { Context, MiddlewareHandler } from "hono";
import { edgeRefusal } from "./refusal.ts";

export class BodyTooLargeError extends Error {
  override readonly name = "BodyTooLargeError";
  readonly limitBytes: number;
  constructor(limitBytes: number) {
    super(`the request body exceeds ${limitBytes} bytes`);
    this.limitBytes = limitBytes;
  }
}

export function isBodyTooLarge(error: unknown): error is BodyTooLargeError {
  // The handler may see it wrapped (`TypeError: failed to read the body`, cause: ours).
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    if (e instanceof BodyTooLargeError) return true;
  }
  return false;
}

/** The 413 answer for a body over `limitBytes`. */
export function bodyTooLarge(limitBytes: number): Response {
  return edgeRefusal("BODY_TOO_LARGE", `the request body exceeds ${limitBytes} bytes`, { limitBytes });
}

/**
 * Limits every request body to `limitFor(c)` bytes (decided from the method, path and headers,
 * never the body). Over it: `tooLarge` (default 413 `BODY_TOO_LARGE`) from the headers, or
 * `BodyTooLargeError` from the handler's read, which the app's error handler answers the same way.
 */
export function limitBody(
  limitFor: (c: Context) => number,
  options: { tooLarge?: (c: Context, limitBytes: number) => Response } = {},
): MiddlewareHandler {
  const tooLarge = options.tooLarge ?? ((_c: Context, limit: number) => bodyTooLarge(limit));
  return async (c, next) => {
    const raw = c.req.raw;
    if (raw.body === null) return next();
    const limit = limitFor(c);
    const declared = raw.headers.get("content-length");
    if (declared !== null && !raw.headers.has("transfer-encoding")) {
      // Node's parser delivers exactly the declared length, so the header is the whole check.
      const length = Number(declared);
      if (!Number.isSafeInteger(length) || length > limit) return tooLarge(c, limit);
      return next();
    }
    c.req.raw = new Request(raw, { body: countedBody(raw.body, limit), duplex: "half" } as RequestInit);
    return next();
  };
}

function countedBody(body: ReadableStream<Uint8Array>, limit: number): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let seen = 0;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const { done, value } = await reader.read();
        if (done) return controller.close();
        seen += value.byteLength;
        if (seen > limit) {
          controller.error(new BodyTooLargeError(limit));
          await reader.cancel().catch(() => undefined);
          return;
        }
        controller.enqueue(value);
      },
      cancel: (reason) => reader.cancel(reason),
    },
    // Zero: the stream asks for a chunk only when the handler reads one.
    { highWaterMark: 0 },
  );
}
