/**
 * A refusal the bridge answers with `{ error: { code, message, details? } }` and this HTTP
 * status; `details` are the API's own (e.g. a too large file's `issues`) or a page action's report.
 */
export class BridgeError extends Error {
  override readonly name = "BridgeError";
  readonly code: string;
  readonly status: number;
  readonly details: Record<string, unknown> | undefined;
  constructor(code: string, message: string, status?: number, details?: Record<string, unknown>) {
    super(message);
    this.code = code;
    this.status = status ?? STATUS[code] ?? 500;
    this.details = details;
  }

  /** The answer body's `error`. */
  toJSON(): { code: string; message: string; details?: Record<string, unknown> } {
    return {
      code: this.code,
      message: this.message,
      ...(this.details !== undefined ? { details: this.details } : {}),
    };
  }
}

const STATUS: Record<string, number> = {
  INVALID_INPUT: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN_ORIGIN: 403,
  NOT_FOUND: 404,
  UNKNOWN_TOOL: 404,
  BAD_GATEWAY: 502,
};
