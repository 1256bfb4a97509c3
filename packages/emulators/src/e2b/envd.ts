/**
 * envd, the in-sandbox daemon, as the SDKs reach it (routed by the `E2b-Sandbox-Id` /
 * `Novita-Sandbox-Id` header and checked against the sandbox's `X-Access-Token`):
 * Connect-RPC JSON process Start/Connect streams with exit codes, SendInput/CloseStdin/
 * SendSignal/List, filesystem Stat/ListDir/MakeDir/Remove/Move; `GET/POST /files`; `GET /health`.
 * Every call runs as the machine's `user`; a call asking for another user (`user: "root"`) is
 * refused (`unimplemented`, or 501 on `/files`) instead of silently running as `user`.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { readBody, sameSecret, sendEmpty, sendJson } from "../http-util.ts";
import { ConnectError, decodeRequest, openStream, sendUnary, sendUnaryError } from "./connect-rpc.ts";
import type { E2BState, EmulatedProcess, EmulatedSandbox } from "./state.ts";

/** The Connect-RPC services envd serves, as path prefixes. */
export const RPC_PATH = /^\/(process\.Process|filesystem\.Filesystem)\//;

/** The running sandbox the call names, holding its access token; else a Connect error. */
function envdSandbox(state: E2BState, request: IncomingMessage): EmulatedSandbox {
  const id = request.headers[state.idHeader];
  const sbx = typeof id === "string" ? state.sandboxes.get(id) : undefined;
  if (sbx?.state !== "running") {
    throw new ConnectError("unavailable", `sandbox ${String(id)} is not running`);
  }
  const token = request.headers["x-access-token"];
  if (typeof token !== "string" || !sameSecret(token, sbx.envdAccessToken)) {
    throw new ConnectError("unauthenticated", "invalid access token");
  }
  return sbx;
}

/** The only user the emulated machines run commands and files as (the image's `user`). */
const MACHINE_USER = "user";

/**
 * The user a call asks for: the `Authorization: Basic base64("<user>:")` header the SDK sends
 * when a call passes `user`, or `/files`' `username` query; undefined = the default user.
 */
function askedUser(request: IncomingMessage, url?: URL): string | undefined {
  const fromQuery = url?.searchParams.get("username");
  if (fromQuery) return fromQuery;
  const auth = request.headers.authorization ?? "";
  if (!auth.startsWith("Basic ")) return undefined;
  const decoded = Buffer.from(auth.slice(6), "base64").toString("utf8");
  return decoded.split(":")[0] || undefined;
}

/** The refusal of another user (e.g. `root`): every machine runs as `user` only. */
function otherUser(request: IncomingMessage, url?: URL): string | undefined {
  const user = askedUser(request, url);
  return user !== undefined && user !== MACHINE_USER
    ? `user "${user}" is not emulated: commands and files run as "${MACHINE_USER}" only`
    : undefined;
}

const b64 = (data: Buffer) => data.toString("base64");

async function startProcess(
  state: E2BState,
  sbx: EmulatedSandbox,
  config: EmulatedProcess["config"],
  stdin: boolean,
): Promise<{ pid: number; entry: EmulatedProcess }> {
  const pid = state.nextPid++;
  const listeners = new Set<(event: unknown) => void>();
  const emit = (event: unknown) => {
    for (const listener of listeners) listener(event);
  };
  const proc = await state.containers.start(sbx.containerId, {
    argv: [config.cmd, ...config.args],
    env: config.envs,
    ...(config.cwd ? { cwd: config.cwd } : {}),
    stdin,
    onStdout: (data) => emit({ event: { data: { stdout: b64(data) } } }),
    onStderr: (data) => emit({ event: { data: { stderr: b64(data) } } }),
  });
  const entry: EmulatedProcess = { proc, config, listeners };
  sbx.processes.set(pid, entry);
  void proc.exitCode.then((code) => {
    sbx.processes.delete(pid);
    const status = `exit status ${code}`;
    emit({
      event: { end: { exitCode: code, exited: true, status, ...(code !== 0 ? { error: status } : {}) } },
    });
  });
  return { pid, entry };
}

function streamProcess(
  request: IncomingMessage,
  response: ServerResponse,
  pid: number,
  entry: EmulatedProcess,
) {
  const stream = openStream(response);
  stream.send({ event: { start: { pid } } });
  const keepalive = setInterval(() => stream.send({ event: { keepalive: {} } }), 25_000);
  const deadlineMs = Number(request.headers["connect-timeout-ms"] ?? 0);
  const deadline =
    deadlineMs > 0
      ? setTimeout(() => {
          void entry.proc.hostPid.then((hostPid) => {
            if (hostPid > 0) {
              try {
                process.kill(hostPid, "SIGKILL");
              } catch {}
            }
          });
          finish(new ConnectError("deadline_exceeded", "the operation timed out"));
        }, deadlineMs)
      : undefined;
  const finish = (error?: ConnectError) => {
    clearInterval(keepalive);
    if (deadline) clearTimeout(deadline);
    entry.listeners.delete(listener);
    stream.end(error);
  };
  const listener = (event: unknown) => {
    stream.send(event);
    if ((event as { event?: { end?: unknown } }).event?.end !== undefined) finish();
  };
  entry.listeners.add(listener);
  // A disconnect is not a kill: the process keeps running for `Connect`.
  response.on("close", () => {
    clearInterval(keepalive);
    if (deadline) clearTimeout(deadline);
    entry.listeners.delete(listener);
  });
}

async function fsRun(state: E2BState, sbx: EmulatedSandbox, script: string, ...args: string[]) {
  return state.containers.run(sbx.containerId, ["/bin/sh", "-c", script, "rakazo-emu", ...args]);
}

async function entryInfo(state: E2BState, sbx: EmulatedSandbox, path: string) {
  const stat = await fsRun(state, sbx, 'stat -c "%F\t%s\t%a\t%U\t%G\t%Y" -- "$1"', path);
  if (stat.exitCode !== 0) throw new ConnectError("not_found", `path ${path} does not exist`);
  const [kind, size, mode, owner, group, mtime] = stat.stdout.toString().trim().split("\t");
  const type =
    kind === "directory"
      ? "FILE_TYPE_DIRECTORY"
      : kind?.includes("symbolic")
        ? "FILE_TYPE_SYMLINK"
        : "FILE_TYPE_FILE";
  const name = path.split("/").filter(Boolean).at(-1) ?? "/";
  return {
    name,
    type,
    path,
    size: String(Number(size ?? 0)),
    mode: Number.parseInt(mode ?? "0", 8),
    permissions: mode ?? "",
    owner: owner ?? "",
    group: group ?? "",
    modifiedTime: new Date(Number(mtime ?? 0) * 1000).toISOString(),
  };
}

// biome-ignore lint/suspicious/noExplicitAny: the decoded Connect message is untyped JSON
type Message = Record<string, any>;

interface RpcCall {
  readonly state: E2BState;
  readonly sbx: EmulatedSandbox;
  readonly message: Message;
  readonly request: IncomingMessage;
  readonly response: ServerResponse;
}

function processOf({ sbx, message }: RpcCall): EmulatedProcess {
  const entry = sbx.processes.get(Number(message.process?.pid));
  if (!entry) throw new ConnectError("not_found", "process not found");
  return entry;
}

/** envd's RPC methods by `service/Method`. */
const RPC: Record<string, (call: RpcCall) => Promise<void> | void> = {
  "process.Process/Start": async ({ state, sbx, message, request, response }) => {
    const p = message.process ?? {};
    const { pid, entry } = await startProcess(
      state,
      sbx,
      {
        cmd: String(p.cmd),
        args: (p.args ?? []).map(String),
        envs: p.envs ?? {},
        ...(p.cwd ? { cwd: String(p.cwd) } : {}),
      },
      message.stdin === true,
    );
    streamProcess(request, response, pid, entry);
  },
  "process.Process/Connect": ({ sbx, message, request, response }) => {
    const pid = Number(message.process?.pid);
    const entry = sbx.processes.get(pid);
    if (!entry) throw new ConnectError("not_found", `process ${pid} not found`);
    streamProcess(request, response, pid, entry);
  },
  "process.Process/List": ({ sbx, response }) =>
    sendUnary(response, {
      processes: [...sbx.processes.entries()].map(([pid, e]) => ({ pid, config: e.config })),
    }),
  "process.Process/SendInput": (call) => {
    const entry = processOf(call);
    const data = call.message.input?.stdin ?? call.message.input?.pty;
    if (typeof data === "string") entry.proc.write(Buffer.from(data, "base64"));
    sendUnary(call.response, {});
  },
  "process.Process/CloseStdin": (call) => {
    processOf(call).proc.closeStdin();
    sendUnary(call.response, {});
  },
  "process.Process/SendSignal": async (call) => {
    const hostPid = await processOf(call).proc.hostPid;
    if (hostPid > 0) {
      try {
        process.kill(hostPid, call.message.signal === "SIGNAL_SIGTERM" ? "SIGTERM" : "SIGKILL");
      } catch {}
    }
    sendUnary(call.response, {});
  },
  "filesystem.Filesystem/Stat": async ({ state, sbx, message, response }) =>
    sendUnary(response, { entry: await entryInfo(state, sbx, String(message.path)) }),
  "filesystem.Filesystem/ListDir": async ({ state, sbx, message, response }) => {
    const dir = String(message.path);
    const listing = await fsRun(
      state,
      sbx,
      'cd -- "$1" && find . -mindepth 1 -maxdepth 1 -printf "%P\\0"',
      dir,
    );
    if (listing.exitCode !== 0) throw new ConnectError("not_found", `directory ${dir} does not exist`);
    const names = listing.stdout.toString().split("\0").filter(Boolean).sort();
    const entries = [];
    for (const name of names) entries.push(await entryInfo(state, sbx, `${dir.replace(/\/$/, "")}/${name}`));
    sendUnary(response, { entries });
  },
  "filesystem.Filesystem/MakeDir": async ({ state, sbx, message, response }) => {
    const path = String(message.path);
    const made = await fsRun(state, sbx, '[ -e "$1" ] && exit 17; mkdir -p -- "$1"', path);
    if (made.exitCode === 17) throw new ConnectError("already_exists", `${path} already exists`);
    if (made.exitCode !== 0) throw new ConnectError("invalid_argument", made.stderr.toString().trim());
    sendUnary(response, { entry: await entryInfo(state, sbx, path) });
  },
  "filesystem.Filesystem/Remove": async ({ state, sbx, message, response }) => {
    const removed = await fsRun(state, sbx, 'rm -rf -- "$1"', String(message.path));
    if (removed.exitCode !== 0) throw new ConnectError("internal", removed.stderr.toString().trim());
    sendUnary(response, {});
  },
  "filesystem.Filesystem/Move": async ({ state, sbx, message, response }) => {
    const moved = await fsRun(
      state,
      sbx,
      'mv -- "$1" "$2"',
      String(message.source),
      String(message.destination),
    );
    if (moved.exitCode !== 0) throw new ConnectError("not_found", moved.stderr.toString().trim());
    sendUnary(response, { entry: await entryInfo(state, sbx, String(message.destination)) });
  },
};

/** One envd RPC at `path` (`/service/Method`); every refusal is a Connect error answer. */
export async function serveRpc(
  state: E2BState,
  path: string,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  try {
    const streaming = (request.headers["content-type"] ?? "").startsWith("application/connect+json");
    const sbx = envdSandbox(state, request);
    const refused = otherUser(request);
    if (refused) {
      request.resume();
      // A stream's error goes in its end-stream envelope, where the SDK reads the message.
      if (streaming) return openStream(response).end(new ConnectError("unimplemented", refused));
      throw new ConnectError("unimplemented", refused);
    }
    const message = decodeRequest(await readBody(request), streaming) as Message;
    const method = path.slice(1);
    const handle = RPC[method];
    if (!handle) throw new ConnectError("not_found", `unknown method ${method}`);
    await handle({ state, sbx, message, request, response });
  } catch (error) {
    if (error instanceof ConnectError) return sendUnaryError(response, error);
    throw error;
  }
}

/** envd's `/files` (openapi-fetch): raw bytes down, multipart or octet-stream up. */
export async function serveFiles(
  state: E2BState,
  request: IncomingMessage,
  response: ServerResponse,
  url: URL,
): Promise<void> {
  let sbx: EmulatedSandbox;
  try {
    sbx = envdSandbox(state, request);
  } catch (error) {
    const e = error as ConnectError;
    const status = e.code === "unauthenticated" ? 401 : 502;
    return sendJson(response, status, { code: status, message: e.message });
  }
  const refused = otherUser(request, url);
  if (refused) {
    request.resume();
    return sendJson(response, 501, { code: 501, message: refused });
  }
  if (request.method === "GET") {
    const path = url.searchParams.get("path") ?? "";
    const read = await fsRun(state, sbx, '[ -f "$1" ] || exit 44; exec cat -- "$1"', path);
    if (read.exitCode === 44)
      return sendJson(response, 404, { code: 404, message: `file ${path} not found` });
    if (read.exitCode !== 0)
      return sendJson(response, 500, { code: 500, message: read.stderr.toString().trim() });
    response.writeHead(200, {
      "content-type": "application/octet-stream",
      "content-length": read.stdout.length,
    });
    response.end(read.stdout);
    return;
  }
  if (request.method === "POST") {
    const body = await readBody(request);
    const type = request.headers["content-type"] ?? "";
    const uploads: { path: string; data: Buffer }[] = [];
    if (type.startsWith("multipart/form-data")) {
      const form = await new Response(body, { headers: { "content-type": type } }).formData();
      for (const value of form.getAll("file")) {
        if (typeof value === "string") continue;
        const path = url.searchParams.get("path") ?? value.name;
        uploads.push({ path, data: Buffer.from(await value.arrayBuffer()) });
      }
    } else {
      uploads.push({ path: url.searchParams.get("path") ?? "", data: body });
    }
    if (uploads.length === 0 || uploads.some((u) => !u.path.startsWith("/"))) {
      return sendJson(response, 400, { code: 400, message: "a file upload needs an absolute path" });
    }
    for (const upload of uploads) {
      const written = await state.containers.run(
        sbx.containerId,
        ["/bin/sh", "-c", 'mkdir -p -- "$(dirname -- "$1")" && cat >"$1"', "rakazo-emu", upload.path],
        new Uint8Array(upload.data),
      );
      if (written.exitCode !== 0) {
        return sendJson(response, 400, { code: 400, message: written.stderr.toString().trim() });
      }
    }
    return sendJson(
      response,
      200,
      uploads.map((u) => ({ name: u.path.split("/").at(-1), type: "file", path: u.path })),
    );
  }
  sendJson(response, 405, { code: 405, message: "method not allowed" });
}

/** `GET /health`: 204 while the named sandbox runs, else 502. */
export function serveHealth(state: E2BState, request: IncomingMessage, response: ServerResponse): void {
  const id = request.headers[state.idHeader];
  sendEmpty(response, id && state.sandboxes.get(String(id))?.state === "running" ? 204 : 502);
}
