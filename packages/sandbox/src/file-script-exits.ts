/**
 * The exit codes of the in-machine workspace file script (workspace-script.ts, run by Docker's
 * workspace-files.ts and the remote runtime) and what each means to a caller, written once.
 */
import { SandboxError } from "./errors.ts";

/** Exit codes of the file scripts; anything else is a provider error. */
export const FILE_EXIT = {
  outside: 40,
  notFound: 41,
  notDirectory: 42,
  tooLarge: 43,
  isDirectory: 44,
  notFile: 45,
} as const;

export function fileFailure(code: number, op: string, rel: string, stderr: string): SandboxError {
  const shown = JSON.stringify(rel);
  switch (code) {
    case FILE_EXIT.outside:
      return new SandboxError("INVALID_PATH", `${shown} resolves outside the workspace`);
    case FILE_EXIT.notFound:
      return new SandboxError("FILE_NOT_FOUND", `${shown} does not exist`);
    case FILE_EXIT.notDirectory:
      return new SandboxError("NOT_A_DIRECTORY", `${shown} (or a parent) is not a directory`);
    case FILE_EXIT.tooLarge:
      return new SandboxError("FILE_TOO_LARGE", `${shown} is larger than the allowed size`);
    case FILE_EXIT.isDirectory:
      return new SandboxError("INVALID_PATH", `${shown} is a directory`);
    case FILE_EXIT.notFile:
      return new SandboxError("INVALID_PATH", `${shown} is not a regular file`);
    default:
      return new SandboxError(
        "SANDBOX_PROVIDER_ERROR",
        `${op} ${shown} failed (${code}): ${stderr.trim().slice(0, 500)}`,
      );
  }
}
