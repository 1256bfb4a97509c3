/**
 * Foreground exec through the computer's supervisor: `POST /exec` on its Unix socket,
 * answered as NDJSON output frames and one `exit` frame (infra/sandboxes/supervisor/src/
 * exec-route.ts). One local HTTP request instead of Docker's create-exec, start, attach and
 * inspect round trips. Same results as `runExec` (docker-exec.ts): exit code, split output,
 * `timedOut` with 124, streamed chunks.
 *
 * `NotListening` means nothing was run (no socket yet, nobody accepting, or a supervisor without
 * the route): the caller falls back to `docker exec`. Any failure after the command may have
 * started is an error, never a silent second run.
 */
import http from "node:http";
import type { ExecFrame, ExecRequestWire } from "@rakazo/protocol";
import { SandboxError } from "../../errors.ts";
import { BACKSTOP_MS, type RawExecResult } from "./docker-exec.ts";

export class NotListening extends Error {
  override readonly name = "NotListening";
}

const NOT_LISTENING = new Set(["ENOENT", "ECONNREFUSED"]);

export interface SupervisorExecRequest {
  readonly argv: readonly string[];
  /** Workspace-relative. */
  readonly cwd: string;
  readonly env?: Readonly<Record<string, string>>;
  readonly stdin?: string | Uint8Array;
  readonly timeoutMs?: number;
  readonly onStdout?: (chunk: Buffer) => void;
  readonly onStderr?: (chunk: Buffer) => void;
}

export function execThroughSupervisor(
  socketPath: string,
  request: SupervisorExecRequest,
): Promise<RawExecResult> {
  const wire: ExecRequestWire = {
    argv: request.argv,
    cwd: request.cwd,
    ...(request.env ? { env: request.env } : {}),
    ...(request.stdin !== undefined ? { stdinBase64: Buffer.from(request.stdin).toString("base64") } : {}),
    ...(request.timeoutMs !== undefined ? { timeoutMs: Math.max(request.timeoutMs, 1) } : {}),
  };
  const body = JSON.stringify(wire);
  return new Promise((resolve, reject) => {
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    let settled = false;
    const settle = (outcome: () => void): void => {
      if (settled) return;
      settled = true;
      if (backstop) clearTimeout(backstop);
      outcome();
    };
    const finish = (exitCode: number, timedOut: boolean): void =>
      settle(() =>
        resolve({ exitCode, stdout: Buffer.concat(stdout), stderr: Buffer.concat(stderr), timedOut }),
      );
    const fail = (error: Error): void => settle(() => reject(error));

    const call = http.request(
      {
        socketPath,
        method: "POST",
        path: "/exec",
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
        agent: false,
      },
      (response) => {
        if (response.statusCode === 404) {
          response.resume();
          fail(new NotListening("the supervisor has no /exec route"));
          return;
        }
        let pending = "";
        const onFrame = (frame: ExecFrame): void => {
          if ("stream" in frame) {
            const data = Buffer.from(frame.data, "base64");
            if (frame.stream === "stdout") {
              stdout.push(data);
              request.onStdout?.(data);
            } else {
              stderr.push(data);
              request.onStderr?.(data);
            }
          } else if ("exit" in frame) {
            finish(frame.exit.exitCode, frame.exit.timedOut);
          } else {
            fail(new SandboxError("SANDBOX_PROVIDER_ERROR", `exec: ${frame.error.message}`));
          }
        };
        response.setEncoding("utf8");
        response.on("data", (text: string) => {
          pending += text;
          let newline = pending.indexOf("\n");
          while (newline >= 0) {
            const line = pending.slice(0, newline);
            pending = pending.slice(newline + 1);
            if (line.trim() !== "") {
              try {
                onFrame(JSON.parse(line) as ExecFrame);
              } catch {
                fail(
                  new SandboxError(
                    "SANDBOX_PROVIDER_ERROR",
                    "exec: the supervisor answered a malformed frame",
                  ),
                );
              }
            }
            newline = pending.indexOf("\n");
          }
        });
        response.on("end", () =>
          fail(
            new SandboxError(
              "SANDBOX_PROVIDER_ERROR",
              "exec: the supervisor ended the answer without an exit",
            ),
          ),
        );
        response.on("error", fail);
      },
    );
    call.on("error", (error: NodeJS.ErrnoException) => {
      fail(NOT_LISTENING.has(error.code ?? "") ? new NotListening(error.message) : error);
    });
    // As with `docker exec`: if the computer does not end the command shortly after its
    // deadline, the host stops waiting (and hanging up kills the command's group).
    const backstop =
      request.timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            call.destroy();
            finish(124, true);
          }, request.timeoutMs + BACKSTOP_MS);
    call.end(body);
  });
}
