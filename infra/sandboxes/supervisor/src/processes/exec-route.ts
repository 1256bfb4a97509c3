/**
 * `POST /exec`: one foreground command (the Docker provider's `exec`), answered as
 * NDJSON (`ExecFrame` of @rakazo/protocol): output frames as they arrive (base64, so the host
 * decodes bytes exactly as `docker exec` hands them over), then one `exit` or `error` frame.
 *
 * Same semantics as the `docker exec` path: the launcher's exit codes, TERM to the whole group at
 * the deadline and KILL two seconds later, exit 124 with `timedOut`, and a command is over when
 * its output streams close (like `docker exec`, a background child holding them keeps it open).
 * A caller that goes away takes the command's process group with it.
 */
import type http from "node:http";
import { type ExecFrame, execRequestSchema } from "@rakazo/protocol";
import { SupervisorError } from "../errors.ts";
import { exitCodeOf, signalGroup, spawnInWorkspace } from "./processes.ts";

const KILL_AFTER_MS = 2_000;
/** stdin rides in the body, base64: room for the API's 10 MB plus encoding. */
export const EXEC_MAX_BODY = 16 * 1024 * 1024;

export function runExecRoute(workspace: string, body: unknown, response: http.ServerResponse): void {
  response.writeHead(200, { "content-type": "application/x-ndjson" });
  const send = (frame: ExecFrame): void => {
    response.write(`${JSON.stringify(frame)}\n`);
  };
  const parsed = execRequestSchema.safeParse(body);
  if (!parsed.success) {
    send({
      error: { code: "INVALID_ACTION", message: `exec: ${parsed.error.issues[0]?.message ?? "invalid"}` },
    });
    response.end();
    return;
  }
  const request = parsed.data;
  let child: ReturnType<typeof spawnInWorkspace>;
  try {
    child = spawnInWorkspace(workspace, request, request.stdinBase64 !== undefined);
  } catch (error) {
    const code = error instanceof SupervisorError ? error.code : "SANDBOX_PROVIDER_ERROR";
    send({ error: { code, message: (error as Error).message } });
    response.end();
    return;
  }
  if (child.stdin) {
    child.stdin.on("error", () => {}); // a command that does not read its stdin
    child.stdin.end(Buffer.from(request.stdinBase64 ?? "", "base64"));
  }
  for (const stream of ["stdout", "stderr"] as const) {
    child[stream]?.on("data", (chunk: Buffer) => send({ stream, data: chunk.toString("base64") }));
  }
  let timedOut = false;
  let killer: NodeJS.Timeout | undefined;
  const timer =
    request.timeoutMs === undefined
      ? undefined
      : setTimeout(() => {
          timedOut = true;
          signalGroup(child.pid, "SIGTERM");
          killer = setTimeout(() => signalGroup(child.pid, "SIGKILL"), KILL_AFTER_MS);
        }, request.timeoutMs);
  let over = false;
  const finish = (frame: ExecFrame): void => {
    if (over) return;
    over = true;
    if (timer) clearTimeout(timer);
    if (killer) clearTimeout(killer);
    send(frame);
    response.end();
  };
  // The caller hung up before the end: nothing is left running on its behalf.
  response.on("close", () => {
    if (!over) signalGroup(child.pid, "SIGKILL");
  });
  child.on("error", (error) =>
    finish({ error: { code: "SANDBOX_PROVIDER_ERROR", message: `exec: ${error.message}` } }),
  );
  child.on("close", (code, signal) =>
    finish({ exit: { exitCode: timedOut ? 124 : exitCodeOf(code, signal), timedOut } }),
  );
}
