/** A refusal the bridge answers with `{ error: { code, message } }` and this HTTP status. */
export class BridgeError extends Error {
  override readonly name = "BridgeError";
  readonly code: string;
  readonly status: number;
  constructor(code: string, message: string, status?: number) {
    super(message);
    this.code = code;
    this.status = status ?? STATUS[code] ?? 500;
  }
}

const STATUS: Record<string, number> = {
  INVALID_INPUT: 400,
  UNAUTHENTICATED: 401,
  NOT_FOUND: 404,
  UNKNOWN_TOOL: 404,
  BAD_GATEWAY: 502,
};
