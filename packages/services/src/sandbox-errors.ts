import { isSandboxError, type SandboxErrorCode } from "@rakazo/sandbox";
import { AppError, type AppErrorCode } from "./errors.ts";

const FROM_SANDBOX: Record<SandboxErrorCode, AppErrorCode> = {
  SANDBOX_GONE: "COMPUTER_GONE",
  SANDBOX_NOT_RUNNING: "COMPUTER_NOT_READY",
  SANDBOX_UNSUPPORTED: "UNSUPPORTED",
  SANDBOX_PROVIDER_ERROR: "PROVIDER_ERROR",
  INVALID_PATH: "INVALID_PATH",
  FILE_NOT_FOUND: "FILE_NOT_FOUND",
  FILE_TOO_LARGE: "FILE_TOO_LARGE",
  NOT_A_DIRECTORY: "INVALID_PATH",
  INVALID_ARCHIVE: "INVALID_INPUT",
  MULTI_SCREEN_UNAVAILABLE: "MULTI_SCREEN_UNAVAILABLE",
  DESKTOP_UNAVAILABLE: "DESKTOP_UNAVAILABLE",
  INVALID_ACTION: "INVALID_INPUT",
  // The page did not load in time; details.providerCode keeps PAGE_TIMEOUT.
  PAGE_TIMEOUT: "PROVIDER_ERROR",
  // A foreign handle looks exactly like a missing one.
  PROCESS_NOT_FOUND: "NOT_FOUND",
  PROCESS_LIMIT: "PROCESS_LIMIT",
};

/** Runs a provider call, turning its `SandboxError`s into domain errors with stable codes. */
export async function viaProvider<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (isSandboxError(error)) {
      throw new AppError(
        FROM_SANDBOX[error.code],
        error.message,
        { ...error.details, providerCode: error.code },
        { cause: error },
      );
    }
    throw error;
  }
}
