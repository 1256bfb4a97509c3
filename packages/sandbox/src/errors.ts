/** Errors raised by providers. Codes are stable: callers map them, tests assert them. */
export const SANDBOX_ERROR_CODES = [
  "SANDBOX_GONE",
  "SANDBOX_NOT_RUNNING",
  "SANDBOX_UNSUPPORTED",
  "SANDBOX_PROVIDER_ERROR",
  "INVALID_PATH",
  "FILE_NOT_FOUND",
  "FILE_TOO_LARGE",
  "NOT_A_DIRECTORY",
  "INVALID_ARCHIVE",
  "MULTI_SCREEN_UNAVAILABLE",
  "DESKTOP_UNAVAILABLE",
  "INVALID_ACTION",
  /** A page navigation did not finish loading in time (BRW-1). */
  "PAGE_TIMEOUT",
  /** A background process handle that is unknown to this computer, or another owner's. */
  "PROCESS_NOT_FOUND",
  /** The computer's cap on concurrent background processes is reached. */
  "PROCESS_LIMIT",
] as const;
export type SandboxErrorCode = (typeof SANDBOX_ERROR_CODES)[number];

export class SandboxError extends Error {
  readonly code: SandboxErrorCode;
  /** Machine-readable context, e.g. `{ reason: "memory" }` of a refused desktop (CMP-5). */
  readonly details: Record<string, unknown> | undefined;
  override readonly name = "SandboxError";

  constructor(
    code: SandboxErrorCode,
    message: string,
    options?: { cause?: unknown; details?: Record<string, unknown> },
  ) {
    super(message, options);
    this.code = code;
    this.details = options?.details;
  }
}

export function isSandboxError(error: unknown, code?: SandboxErrorCode): error is SandboxError {
  return error instanceof SandboxError && (code === undefined || error.code === code);
}
