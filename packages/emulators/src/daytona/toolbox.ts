/**
 * Daytona's toolbox under `/toolbox/<sandboxId>` (the `toolboxProxyUrl` the control plane
 * returns), for a started sandbox only: one-shot execute (stderr joined to the result), sessions
 * whose commands run async or sync with stdout/stderr apart and whose logs are followable over a
 * websocket in the SDK's `01 01 01` / `02 02 02` framing, and the SDK's multipart bulk upload and
 * download. Each session command runs in a fresh `bash -c` (no shell state between commands).
 */
import { randomBytes, randomUUID } from "node:crypto";
import type http from "node:http";
import type { Duplex } from "node:stream";
import busboy from "busboy";
import type { WebSocketServer } from "ws";
import { hasBearer, isRecord, readJson, sendEmpty, sendJson, shellQuote } from "../http-util.ts";
import { MACHINE_HOME } from "../machines.ts";
import type { Call, Handler, Router } from "../router.ts";
import { type Daytona, fail, idParam, type Sandbox, type SessionCommand } from "./state.ts";

function emit(command: SessionCommand, stream: "stdout" | "stderr", chunk: Buffer) {
  const copy = Buffer.from(chunk);
  (stream === "stdout" ? command.stdout : command.stderr).push(copy);
  command.events.push([stream, copy]);
  for (const follower of command.followers) follower([stream, copy]);
}

function runSession(daytona: Daytona, s: Sandbox, command: SessionCommand) {
  return daytona.machines
    .exec(s.containerId, {
      command: command.command,
      cwd: MACHINE_HOME,
      onStdout: (chunk) => emit(command, "stdout", chunk),
      onStderr: (chunk) => emit(command, "stderr", chunk),
    })
    .then(
      (result) => {
        command.exitCode = result.exitCode;
      },
      (error: unknown) => {
        emit(command, "stderr", Buffer.from(`${(error as Error).message}\n`));
        command.exitCode = 1;
      },
    )
    .finally(() => {
      for (const follower of command.followers) follower(null);
    });
}

async function writeFile(daytona: Daytona, s: Sandbox, path: string, bytes: Buffer) {
  const quoted = shellQuote(path);
  const result = await daytona.machines.exec(s.containerId, {
    command: `mkdir -p -- "$(dirname -- ${quoted})" && cat > ${quoted}`,
    stdin: bytes,
  });
  if (result.exitCode !== 0) throw new Error(result.stderr.toString().trim() || "write failed");
}

/** The `files[i].path` / `files[i].file` parts of a bulk upload, by index. */
function readUploads(request: http.IncomingMessage) {
  const files = new Map<string, { path?: string; data?: Buffer }>();
  return new Promise<typeof files>((resolve, reject) => {
    const parser = busboy({
      headers: request.headers,
      preservePath: true,
      limits: { fileSize: 1024 ** 3 },
    });
    const slot = (field: string) => {
      const m = field.match(/^files\[(\d+)\]\.(path|file)$/);
      if (!m) return undefined;
      const index = m[1] ?? "";
      const entry = files.get(index) ?? {};
      files.set(index, entry);
      return { entry, kind: m[2] as "path" | "file" };
    };
    parser.on("field", (name, value) => {
      const target = slot(name);
      if (target?.kind === "path") target.entry.path = value;
    });
    parser.on("file", (name, stream) => {
      const target = slot(name);
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        if (target?.kind === "file") target.entry.data = Buffer.concat(chunks);
      });
    });
    parser.on("close", () => resolve(files));
    parser.on("error", reject);
    request.pipe(parser);
  });
}

export function toolboxRoutes(router: Router, daytona: Daytona): void {
  /** The guard of `/toolbox/:id/…`: the sandbox by id (404), started (409); counts as activity. */
  const inToolbox =
    <P extends string>(handle: (s: Sandbox, call: Call<P>) => Promise<void> | void): Handler<P> =>
    (call) => {
      const s = daytona.sandboxes.get(idParam(call));
      if (!s) return fail(call.response, 404, "sandbox not found", "NOT_FOUND");
      if (s.state !== "started")
        return fail(call.response, 409, `sandbox ${s.id} is ${s.state}`, "SANDBOX_NOT_STARTED");
      s.lastActivity = daytona.now();
      return handle(s, call);
    };
  const sessionOf = (s: Sandbox, call: Call) =>
    s.sessions.get((call.params as Readonly<Record<string, string>>).session ?? "");

  router.on(
    "POST",
    "/toolbox/:id/process/execute",
    inToolbox(async (s, { request, response }) => {
      const body = await readJson(request);
      if (!isRecord(body) || typeof body.command !== "string")
        return fail(response, 400, "command is required");
      const timeout = typeof body.timeout === "number" && body.timeout > 0 ? body.timeout * 1000 : undefined;
      const result = await daytona.machines.exec(s.containerId, {
        // The daemon hands the command to a shell; stderr joins the combined result.
        command: `exec 2>&1; ${body.command}`,
        cwd: typeof body.cwd === "string" ? body.cwd : MACHINE_HOME,
        ...(isRecord(body.envs) ? { env: body.envs as Record<string, string> } : {}),
        ...(timeout ? { timeoutMs: timeout } : {}),
      });
      sendJson(response, 200, { exitCode: result.exitCode, result: result.stdout.toString("utf8") });
    }),
  );

  router.on(
    "POST",
    "/toolbox/:id/process/session",
    inToolbox(async (s, { request, response }) => {
      const body = await readJson(request);
      const sessionId = isRecord(body) ? body.sessionId : undefined;
      if (typeof sessionId !== "string" || sessionId === "")
        return fail(response, 400, "sessionId is required");
      if (s.sessions.has(sessionId))
        return fail(response, 409, `session ${sessionId} exists`, "SESSION_EXISTS");
      s.sessions.set(sessionId, new Map());
      sendEmpty(response, 201);
    }),
  );

  router.on(
    "GET",
    "/toolbox/:id/process/session/:session",
    inToolbox((s, call) => {
      const session = sessionOf(s, call);
      if (!session) return fail(call.response, 404, "session not found", "SESSION_NOT_FOUND");
      sendJson(call.response, 200, {
        sessionId: call.params.session,
        commands: [...session.values()].map((c) => ({
          id: c.id,
          command: c.command,
          exitCode: c.exitCode ?? undefined,
        })),
      });
    }),
  );

  router.on(
    "DELETE",
    "/toolbox/:id/process/session/:session",
    inToolbox((s, call) => {
      if (!sessionOf(s, call)) return fail(call.response, 404, "session not found", "SESSION_NOT_FOUND");
      s.sessions.delete(call.params.session);
      sendEmpty(call.response, 204);
    }),
  );

  router.on(
    "POST",
    "/toolbox/:id/process/session/:session/exec",
    inToolbox(async (s, call) => {
      const { request, response } = call;
      const session = sessionOf(s, call);
      if (!session) return fail(response, 404, "session not found", "SESSION_NOT_FOUND");
      const body = await readJson(request);
      if (!isRecord(body) || typeof body.command !== "string")
        return fail(response, 400, "command is required");
      const command: SessionCommand = {
        id: randomUUID(),
        command: body.command,
        exitCode: null,
        stdout: [],
        stderr: [],
        events: [],
        followers: new Set(),
      };
      session.set(command.id, command);
      const done = runSession(daytona, s, command);
      if (body.runAsync === true || body.async === true)
        return sendJson(response, 202, { cmdId: command.id });
      await done;
      const stdout = Buffer.concat(command.stdout).toString("utf8");
      const stderr = Buffer.concat(command.stderr).toString("utf8");
      sendJson(response, 200, {
        cmdId: command.id,
        exitCode: command.exitCode,
        output: stdout + stderr,
        stdout,
        stderr,
      });
    }),
  );

  const commandOf = (s: Sandbox, call: Call) =>
    sessionOf(s, call)?.get((call.params as Readonly<Record<string, string>>).command ?? "");

  router.on(
    "GET",
    "/toolbox/:id/process/session/:session/command/:command",
    inToolbox((s, call) => {
      const command = commandOf(s, call);
      if (!command) return fail(call.response, 404, "command not found", "COMMAND_NOT_FOUND");
      sendJson(call.response, 200, {
        id: command.id,
        command: command.command,
        exitCode: command.exitCode ?? undefined,
      });
    }),
  );

  router.on(
    "GET",
    "/toolbox/:id/process/session/:session/command/:command/logs",
    inToolbox((s, call) => {
      const command = commandOf(s, call);
      if (!command) return fail(call.response, 404, "command not found", "COMMAND_NOT_FOUND");
      const stdout = Buffer.concat(command.stdout).toString("utf8");
      const stderr = Buffer.concat(command.stderr).toString("utf8");
      sendJson(call.response, 200, { output: stdout + stderr, stdout, stderr });
    }),
  );

  router.on(
    "POST",
    "/toolbox/:id/files/bulk-upload",
    inToolbox(async (s, { request, response }) => {
      const files = await readUploads(request);
      for (const { path, data } of files.values()) {
        if (!path || !data) return fail(response, 400, "each file needs a path and content");
        await writeFile(daytona, s, path, data);
      }
      sendEmpty(response, 200);
    }),
  );

  router.on(
    "POST",
    "/toolbox/:id/files/bulk-download",
    inToolbox(async (s, { request, response }) => {
      const body = await readJson(request);
      const paths =
        isRecord(body) && Array.isArray(body.paths) ? body.paths.filter((p) => typeof p === "string") : [];
      const boundary = `emulator${randomBytes(12).toString("hex")}`;
      const parts: Buffer[] = [];
      for (const path of paths as string[]) {
        const read = await daytona.machines.exec(s.containerId, {
          command: `test -f ${shellQuote(path)} || exit 44; cat -- ${shellQuote(path)}`,
        });
        const found = read.exitCode === 0;
        const content = found
          ? read.stdout
          : Buffer.from(
              JSON.stringify({
                message: read.exitCode === 44 ? `file not found: ${path}` : read.stderr.toString().trim(),
                statusCode: read.exitCode === 44 ? 404 : 500,
                code: read.exitCode === 44 ? "FILE_NOT_FOUND" : "FILE_READ_FAILED",
              }),
            );
        parts.push(
          Buffer.from(
            `--${boundary}\r\nContent-Disposition: form-data; name="${found ? "file" : "error"}"; filename="${path.replaceAll('"', "%22")}"\r\n` +
              `Content-Type: ${found ? "application/octet-stream" : "application/json"}\r\nContent-Length: ${content.length}\r\n\r\n`,
          ),
          content,
          Buffer.from("\r\n"),
        );
      }
      parts.push(Buffer.from(`--${boundary}--\r\n`));
      const payload = Buffer.concat(parts);
      response.writeHead(200, {
        "content-type": `multipart/form-data; boundary=${boundary}`,
        "content-length": payload.length,
      });
      response.end(payload);
    }),
  );
}

const LOGS_PATH = /^\/toolbox\/([^/]+)\/process\/session\/([^/]+)\/command\/([^/]+)\/logs$/;

/** Followed session logs: one websocket per follower, closed when the command ends. */
export function followLogs(
  daytona: Daytona,
  wss: WebSocketServer,
  apiKey: string,
  request: http.IncomingMessage,
  socket: Duplex,
  head: Buffer,
): void {
  const url = new URL(request.url ?? "/", "http://daytona.invalid");
  const match = url.pathname.match(LOGS_PATH);
  const s = match ? daytona.sandboxes.get(decodeURIComponent(match[1] ?? "")) : undefined;
  const command =
    match && s?.sessions.get(decodeURIComponent(match[2] ?? ""))?.get(decodeURIComponent(match[3] ?? ""));
  if (!hasBearer(request, apiKey) || !command) {
    socket.end("HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n");
    return;
  }
  wss.handleUpgrade(request, socket, head, (ws) => {
    const prefix = (stream: "stdout" | "stderr") => Buffer.from(stream === "stdout" ? [1, 1, 1] : [2, 2, 2]);
    const send = (event: ["stdout" | "stderr", Buffer] | null) => {
      if (event === null) {
        command.followers.delete(send);
        ws.close(1000);
        return;
      }
      ws.send(Buffer.concat([prefix(event[0]), event[1]]));
    };
    for (const event of command.events) send(event);
    if (command.exitCode !== null) return ws.close(1000);
    command.followers.add(send);
    ws.on("close", () => command.followers.delete(send));
  });
}
