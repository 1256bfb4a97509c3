/**
 * Domain errors. The code is the stable contract (clients and tests match on it); each
 * transport maps codes in one place (HTTP: apps/api/src/http-errors.ts).
 */
export const APP_ERROR_CODES = [
  "INVALID_JSON",
  "INVALID_INPUT",
  "BODY_TOO_LARGE",
  "UNSUPPORTED_MEDIA_TYPE",
  "HOST_NOT_ALLOWED",
  "UNKNOWN_RPC",
  "METHOD_NOT_ALLOWED",
  "UNAUTHENTICATED",
  "FORBIDDEN",
  "NOT_FOUND",
  "ALREADY_BOOTSTRAPPED",
  "COMPUTER_NOT_READY",
  "COMPUTER_GONE",
  "CONFLICT",
  "LEASE_HELD",
  "STALE_LEASE",
  "TAKEOVER_CONFLICT",
  "CONTROL_HELD",
  "NOT_IN_CONTROL",
  "HUMAN_IN_CONTROL",
  "INVALID_PATH",
  "FILE_NOT_FOUND",
  "FILE_TOO_LARGE",
  "MULTI_SCREEN_UNAVAILABLE",
  "PROCESS_LIMIT",
  "QUOTA_EXCEEDED",
  "DESKTOP_UNAVAILABLE",
  "UNSUPPORTED",
  "PROVIDER_ERROR",
  "NOT_SERVER_OWNER",
  "WORKERS_STOPPED_REQUIRED",
  "OPERATION_IN_OTHER_SPACE",
  "OPERATION_NOT_INTERRUPTED",
  "OPERATION_IN_PROGRESS",
  "NOT_SPACE_OWNER",
  "LAST_OWNER",
  "INVITE_INVALID",
  "INVITE_EXPIRED",
  "INVITE_USED",
  "ALREADY_MEMBER",
  "DATABASE_UNAVAILABLE",
  "INTERNAL",
] as const;
export type AppErrorCode = (typeof APP_ERROR_CODES)[number];

export class AppError extends Error {
  readonly code: AppErrorCode;
  readonly details: Record<string, unknown> | undefined;
  override readonly name = "AppError";

  constructor(
    code: AppErrorCode,
    message: string,
    details?: Record<string, unknown>,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.code = code;
    this.details = details;
  }
}

export function isAppError(error: unknown): error is AppError {
  return error instanceof AppError;
}
