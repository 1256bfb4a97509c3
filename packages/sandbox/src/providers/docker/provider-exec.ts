/**
 * The Docker computer's `exec` (ExecRequest → ExecResult): through the supervisor's socket when
 * it listens (supervisor-exec.ts), otherwise one `docker exec` (docker-exec.ts), e.g.
 * before the supervisor has started or in a container run without it. Both give the same
 * results; docs/decisions.md says why the fallback stays.
 */
import type Docker from "dockerode";
import { isSandboxError, SandboxError } from "../../errors.ts";
import { normalizeWorkspacePath } from "../../paths.ts";
import type { ExecRequest, ExecResult } from "../../provider.ts";
import { WORKSPACE_DIR } from "./container-spec.ts";
import { type RawExecResult, runExec } from "./docker-exec.ts";
import { execThroughSupervisor, NotListening } from "./supervisor-exec.ts";

/**
 * `null`: the computer has no supervisor socket (yet), or one the host refuses to connect to
 * (e.g. a planted symlink, host-sockets.ts): `docker exec` does not depend on it.
 */
async function socketOrNull(socket: () => Promise<string>): Promise<string | null> {
  try {
    return await socket();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT" || isSandboxError(error, "DESKTOP_UNAVAILABLE")) {
      return null;
    }
    throw error;
  }
}

export function createExec(
  docker: Docker,
  ref: string,
  /** The verified host path of the computer's `supervisor.sock` (host-sockets.ts); absent: always `docker exec`. */
  supervisorSocket?: () => Promise<string>,
): (request: ExecRequest) => Promise<ExecResult> {
  return async (request) => {
    const rel = normalizeWorkspacePath(request.cwd ?? "");
    const stdoutDecoder = new TextDecoder();
    const stderrDecoder = new TextDecoder();
    const onOutput = request.onOutput;
    const raw = {
      argv: request.argv,
      ...(request.env ? { env: request.env } : {}),
      ...(request.stdin !== undefined ? { stdin: request.stdin } : {}),
      ...(request.timeoutMs !== undefined ? { timeoutMs: request.timeoutMs } : {}),
      ...(onOutput
        ? {
            onStdout: (chunk: Buffer) => {
              const data = stdoutDecoder.decode(chunk, { stream: true });
              if (data) onOutput({ stream: "stdout", data });
            },
            onStderr: (chunk: Buffer) => {
              const data = stderrDecoder.decode(chunk, { stream: true });
              if (data) onOutput({ stream: "stderr", data });
            },
          }
        : {}),
    };
    let result: RawExecResult | undefined;
    const socket = supervisorSocket ? await socketOrNull(supervisorSocket) : null;
    if (socket) {
      try {
        result = await execThroughSupervisor(socket, { ...raw, cwd: rel });
      } catch (error) {
        if (!(error instanceof NotListening)) {
          if (error instanceof SandboxError) throw error;
          throw new SandboxError("SANDBOX_PROVIDER_ERROR", `exec: ${(error as Error).message}`, {
            cause: error,
          });
        }
      }
    }
    result ??= await runExec(docker, ref, {
      ...raw,
      cwd: rel === "" ? WORKSPACE_DIR : `${WORKSPACE_DIR}/${rel}`,
    });
    if (onOutput) {
      const restOut = stdoutDecoder.decode();
      if (restOut) onOutput({ stream: "stdout", data: restOut });
      const restErr = stderrDecoder.decode();
      if (restErr) onOutput({ stream: "stderr", data: restErr });
    }
    return {
      exitCode: result.exitCode,
      stdout: result.stdout.toString("utf8"),
      stderr: result.stderr.toString("utf8"),
      timedOut: result.timedOut,
    };
  };
}
