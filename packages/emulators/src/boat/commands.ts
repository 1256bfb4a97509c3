/**
 * Work inside a Boat sandbox's machine: commands (whole answer, or NDJSON frames with
 * `stream: true`; a starting sandbox is waited for), and reading/writing one file under
 * /home/user or /tmp (utf8 or base64; writes land atomically through a temp file).
 */
import type { ServerResponse } from "node:http";
import { isRecord, readJson, sendJson, shellQuote } from "../http-util.ts";
import { MACHINE_HOME } from "../machines.ts";
import type { Router } from "../router.ts";
import { decideCommand } from "./lifecycle.ts";
import {
  type Boat,
  containerOf,
  type Entry,
  fail,
  onEntry,
  refuse,
  resolvePath,
  waitUsable,
} from "./state.ts";

/** Whether the sandbox takes file calls now; answers 409 `sandbox_not_ready` when not. */
function readyForFiles(entry: Entry, response: ServerResponse): boolean {
  const ready = decideCommand(entry.record);
  if (ready !== "wait" && ready.ok) return true;
  fail(response, 409, "sandbox_not_ready", `sandbox is ${entry.record.state}`);
  return false;
}

export function commandRoutes(router: Router, boat: Boat): void {
  router.on(
    "POST",
    "/sandboxes/:id/commands",
    onEntry(boat, async (entry, _id, { request, response }) => {
      const body = await readJson(request);
      if (!isRecord(body) || typeof body.command !== "string" || body.command.length === 0) {
        return fail(response, 400, "invalid_command", "command must be a non-empty string");
      }
      const timeoutSeconds = body.timeoutSeconds ?? 30;
      if (
        !Number.isInteger(timeoutSeconds) ||
        (timeoutSeconds as number) < 1 ||
        (timeoutSeconds as number) > 600
      ) {
        return fail(response, 400, "invalid_timeout", "timeoutSeconds must be an integer in 1-600");
      }
      const ready = await waitUsable(entry, 60_000);
      if (!ready.ok) return refuse(response, ready);
      const cwd = typeof body.cwd === "string" ? body.cwd : MACHINE_HOME;
      const containerId = containerOf(entry);
      const timeoutMs = (timeoutSeconds as number) * 1000;
      if (body.stream === true) {
        response.writeHead(200, { "content-type": "application/x-ndjson" });
        const frame = (value: unknown) => response.write(`${JSON.stringify(value)}\n`);
        frame({ type: "started" });
        try {
          const result = await boat.machines.exec(containerId, {
            command: body.command,
            cwd,
            timeoutMs,
            onStdout: (chunk) => frame({ type: "stdout", data: chunk.toString("utf8") }),
            onStderr: (chunk) => frame({ type: "stderr", data: chunk.toString("utf8") }),
          });
          frame({
            type: "exit",
            success: result.exitCode === 0,
            exitCode: result.exitCode,
            timedOut: result.timedOut,
          });
        } catch (error) {
          frame({ type: "error", error: "boat_direct_failed", message: (error as Error).message });
        }
        response.end();
        return;
      }
      const result = await boat.machines.exec(containerId, { command: body.command, cwd, timeoutMs });
      sendJson(response, 200, {
        ok: true,
        type: "command.result",
        success: result.exitCode === 0,
        exitCode: result.exitCode,
        stdout: result.stdout.toString("utf8"),
        stderr: result.stderr.toString("utf8"),
        timedOut: result.timedOut,
      });
    }),
    "command",
  );

  router.on(
    "GET",
    "/sandboxes/:id/files",
    onEntry(boat, async (entry, _id, { response, url }) => {
      if (!readyForFiles(entry, response)) return;
      const encoding = url.searchParams.get("encoding") ?? "utf8";
      if (encoding !== "utf8" && encoding !== "base64") {
        return fail(response, 400, "invalid_encoding", "encoding must be utf8 or base64");
      }
      const path = await resolvePath(boat, containerOf(entry), url.searchParams.get("path") ?? "");
      if (!path) return fail(response, 400, "invalid_path", "path must resolve under /home/user or /tmp");
      const read = await boat.machines.exec(containerOf(entry), {
        command: `test -f ${shellQuote(path)} || exit 44; cat -- ${shellQuote(path)}`,
      });
      if (read.exitCode === 44) return fail(response, 404, "file_not_found", `no file at ${path}`);
      if (read.exitCode !== 0)
        return fail(response, 500, "read_failed", read.stderr.toString().slice(0, 200));
      sendJson(response, 200, {
        ok: true,
        type: "file.read",
        success: true,
        path,
        encoding,
        size: read.stdout.length,
        content: read.stdout.toString(encoding === "base64" ? "base64" : "utf8"),
      });
    }),
    "readFile",
  );

  router.on(
    "PUT",
    "/sandboxes/:id/files",
    onEntry(boat, async (entry, _id, { request, response }) => {
      if (!readyForFiles(entry, response)) return;
      const body = await readJson(request);
      if (!isRecord(body) || typeof body.path !== "string" || typeof body.content !== "string") {
        return fail(response, 400, "invalid_body", "path and content are required strings");
      }
      const encoding = body.encoding ?? "utf8";
      if (encoding !== "utf8" && encoding !== "base64") {
        return fail(response, 400, "invalid_encoding", "encoding must be utf8 or base64");
      }
      const path = await resolvePath(boat, containerOf(entry), body.path);
      if (!path) return fail(response, 400, "invalid_path", "path must resolve under /home/user or /tmp");
      const bytes = Buffer.from(body.content, encoding === "base64" ? "base64" : "utf8");
      const quoted = shellQuote(path);
      const write = await boat.machines.exec(containerOf(entry), {
        command: `mkdir -p -- "$(dirname -- ${quoted})" && tmp="$(mktemp -- ${quoted}.XXXXXX)" && cat > "$tmp" && mv -f -- "$tmp" ${quoted}`,
        stdin: bytes,
      });
      if (write.exitCode !== 0)
        return fail(response, 400, "write_failed", write.stderr.toString().slice(0, 200));
      sendJson(response, 200, {
        ok: true,
        type: "file.written",
        success: true,
        path,
        encoding,
        size: bytes.length,
      });
    }),
    "writeFile",
  );
}
