/** Errors of the home store. Codes are stable: verbs map them, tests assert them. */
export const HOME_ERROR_CODES = [
  /** The archive breaks PER-6 (absolute path, `..`, link, device, …). */
  "INVALID_ARCHIVE",
  /** A sealed checkpoint failed authentication: altered, truncated, reordered or spliced. */
  "CHECKPOINT_TAMPERED",
  /** The archive exceeds the entry or byte limit. */
  "CHECKPOINT_TOO_LARGE",
  /** The stored revision the caller asked for does not exist. */
  "CHECKPOINT_NOT_FOUND",
  /** Another checkpoint advanced the revision first; this one was discarded. */
  "CHECKPOINT_CONFLICT",
  /** The home's data key is gone (crypto-shredded) or was never created. */
  "KEY_UNAVAILABLE",
  /** A wrapped key did not open: wrong master/content key, or the wrapped value was altered. */
  "KEY_UNWRAP_FAILED",
  /** Configuration is unusable (e.g. a master key that is not 32 bytes). */
  "INVALID_CONFIG",
  /** A home key that cannot be one path segment / object key segment. */
  "INVALID_HOME_KEY",
  /** A path inside the stored workspace that does not exist / is not allowed. */
  "FILE_NOT_FOUND",
  "INVALID_PATH",
  "FILE_TOO_LARGE",
  /** The object store answered with an error, or did not answer in time (after the SDK's retries). */
  "STORAGE_ERROR",
  /** The disk under `DATA_DIR` is full (`details.errno`: ENOSPC or EDQUOT); nothing was committed. */
  "STORAGE_FULL",
] as const;
export type HomeErrorCode = (typeof HOME_ERROR_CODES)[number];

export class HomeStoreError extends Error {
  readonly code: HomeErrorCode;
  readonly details: Record<string, unknown> | undefined;
  override readonly name = "HomeStoreError";

  constructor(
    code: HomeErrorCode,
    message: string,
    options?: { cause?: unknown; details?: Record<string, unknown> },
  ) {
    super(message, options);
    this.code = code;
    this.details = options?.details;
  }
}

const DISK_FULL = new Set(["ENOSPC", "EDQUOT"]);

/**
 * A full disk anywhere in `error`'s cause chain (an extraction wraps the write's error) becomes
 * `STORAGE_FULL` naming the errno; anything else is returned as it was.
 */
export function diskFullAsHomeError(error: unknown, what: string): unknown {
  for (let current = error, depth = 0; current && depth < 8; depth++) {
    const errno = (current as { code?: unknown }).code;
    if (typeof errno === "string" && DISK_FULL.has(errno)) {
      return new HomeStoreError("STORAGE_FULL", `${what}: the disk under DATA_DIR is full (${errno})`, {
        cause: error,
        details: { errno, path: (current as { path?: unknown }).path },
      });
    }
    current = (current as { cause?: unknown }).cause;
  }
  return error;
}

export function isHomeStoreError(error: unknown, code?: HomeErrorCode): error is HomeStoreError {
  return error instanceof HomeStoreError && (code === undefined || error.code === code);
}
