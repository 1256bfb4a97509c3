/**
 * A loopback emulator of the E2B (and Novita) sandbox service that the REAL SDKs talk to
 * through their own configuration (`apiUrl`, `sandboxUrl`; docs/providers.md, "E2B" and "Novita"):
 * - control plane: create, get, list by metadata, connect/resume, pause, set timeout, kill —
 *   with the services' JSON error bodies (`{code:<int>, message}`) and status codes;
 * - envd (Connect-RPC JSON, routed by the `E2b-Sandbox-Id` / `Novita-Sandbox-Id` header):
 *   process Start/Connect streams with exit codes, SendInput/CloseStdin/SendSignal/List,
 *   filesystem Stat/ListDir/MakeDir/Remove/Move, `GET/POST /files`, `GET /health`;
 * - port hosting under `/hosts/<port>-<sandboxId>.<domain>/…` (the SDK's `getHost`), checked
 *   per request against the sandbox's state and traffic access token, relayed into the container
 *   by `socat` over one stream per client connection and target (`forwardPinned`).
 * Every sandbox is a Docker container of the computer image with `--network none`; pause keeps
 * its filesystem and memory (`docker pause`), kill removes it, an expired TTL pauses or kills
 * as the create asked. A resume issues a fresh envd access token, as the service does.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type Docker from "dockerode";
import { forwardPinned } from "../port-proxy.ts";
import {
  ConnectError,
  decodeRequest,
  openStream,
  readBody,
  sendUnary,
  sendUnaryError,
} from "./connect-rpc.ts";
import { type Containers, createContainers, defaultDocker, type RunningProcess } from "./containers.ts";

export type Flavor = "e2b" | "novita";

export interface EmulatorOptions {
  readonly flavor?: Flavor;
  /** The computer image every template maps to. */
  readonly image: string;
  /** The API key the SDK must send (`X-API-KEY`). */
  readonly apiKey: string;
  readonly docker?: Docker;
  /** Labels on every container this emulator makes. */
  readonly labels?: Readonly<Record<string, string>>;
  readonly host?: string;
  /** 0 (default) = an ephemeral port. */
  readonly port?: number;
  /** Concurrent sandboxes before create answers 429 (the service's limit). Default 20. */
  readonly maxSandboxes?: number;
  /** The domain in answers; `getHost(port)` = `<port>-<id>.<domain>`. */
  readonly domain?: string;
}

interface EmulatedSandbox {
  readonly id: string;
  readonly templateId: string;
  readonly containerId: string;
  readonly metadata: Record<string, string>;
  readonly startedAt: Date;
  endAt: Date;
  state: "running" | "paused";
  envdAccessToken: string;
  readonly trafficAccessToken: string | undefined;
  readonly autoPause: boolean;
  timer?: NodeJS.Timeout;
  readonly processes: Map<number, EmulatedProcess>;
}

interface EmulatedProcess {
  readonly proc: RunningProcess;
  readonly config: { cmd: string; args: string[]; envs: Record<string, string>; cwd?: string };
  readonly listeners: Set<(event: unknown) => void>;
}

export interface E2BEmulator {
  /** The base URL for both `apiUrl` and `sandboxUrl`. */
  readonly url: string;
  readonly domain: string;
  /** `getHost(port)` → URL, for the adapter's `portUrlTemplate`. */
  readonly portUrlTemplate: string;
  /** What to export so an unmodified SDK (and the adapter) uses this emulator. */
  readonly env: Readonly<Record<string, string>>;
  /** The ids of live sandboxes. */
  sandboxes(): string[];
  /** Kills a sandbox behind the client's back (as when it expires or is removed elsewhere). */
  killSandbox(id: string): Promise<void>;
  /** Runs the sandbox's TTL action now (pause or kill, as created). */
  expire(id: string): Promise<void>;
  /** Removes every sandbox and stops listening. */
  close(): Promise<void>;
}

const ENVD_VERSION = "0.6.4";

function safeEqual(a: string, b: string): boolean {
  const x = createHash("sha256").update(a).digest();
  const y = createHash("sha256").update(b).digest();
  return timingSafeEqual(x, y);
}

function newId(): string {
  return `i${randomBytes(10).toString("hex")}`;
}

class ApiError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

function sendJson(response: ServerResponse, status: number, body?: unknown): void {
  if (body === undefined) {
    response.writeHead(status).end();
    return;
  }
  const text = JSON.stringify(body);
  response.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
  });
  response.end(text);
}

/** Decodes the SDK's metadata filter: `key=value` pairs joined by `&`, then URL-encoded again. */
export function decodeMetadataQuery(value: string | null): Record<string, string> {
  const out: Record<string, string> = {};
  if (!value) return out;
  for (const [key, v] of new URLSearchParams(value)) out[decodeURIComponent(key)] = decodeURIComponent(v);
  return out;
}

export async function startE2BEmulator(options: EmulatorOptions): Promise<E2BEmulator> {
  const flavor = options.flavor ?? "e2b";
  const docker = options.docker ?? defaultDocker();
  const containers: Containers = createContainers({
    docker,
    image: options.image,
    labels: { "rakazo-emulator.flavor": flavor, ...(options.labels ?? {}) },
  });
  const domain = options.domain ?? `${flavor}.emulator.localhost`;
  const maxSandboxes = options.maxSandboxes ?? 20;
  const sandboxes = new Map<string, EmulatedSandbox>();
  let nextPid = 1000;
  const idHeader = flavor === "e2b" ? "e2b-sandbox-id" : "novita-sandbox-id";

  const schedule = (sbx: EmulatedSandbox) => {
    if (sbx.timer) clearTimeout(sbx.timer);
    if (sbx.state !== "running") return;
    const ms = Math.max(0, sbx.endAt.getTime() - Date.now());
    sbx.timer = setTimeout(() => void expire(sbx.id).catch(() => undefined), Math.min(ms, 2 ** 31 - 1));
    sbx.timer.unref();
  };

  const kill = async (id: string): Promise<boolean> => {
    const sbx = sandboxes.get(id);
    if (!sbx) return false;
    sandboxes.delete(id);
    if (sbx.timer) clearTimeout(sbx.timer);
    await containers.remove(sbx.containerId).catch(() => undefined);
    return true;
  };

  const pause = async (sbx: EmulatedSandbox) => {
    if (sbx.timer) clearTimeout(sbx.timer);
    await containers.pause(sbx.containerId);
    sbx.state = "paused";
  };

  const expire = async (id: string) => {
    const sbx = sandboxes.get(id);
    if (sbx?.state !== "running") return;
    if (sbx.autoPause) await pause(sbx);
    else await kill(id);
  };

  const found = (id: string): EmulatedSandbox => {
    const sbx = sandboxes.get(id);
    if (!sbx) throw new ApiError(404, `sandbox "${id}" not found`);
    return sbx;
  };

  const detail = (sbx: EmulatedSandbox) => ({
    sandboxID: sbx.id,
    templateID: sbx.templateId,
    clientID: "emulator",
    metadata: sbx.metadata,
    startedAt: sbx.startedAt.toISOString(),
    endAt: sbx.endAt.toISOString(),
    state: sbx.state,
    cpuCount: 2,
    memoryMB: 2048,
    diskSizeMB: 10240,
    envdVersion: ENVD_VERSION,
    domain,
  });

  const connectAnswer = (sbx: EmulatedSandbox) => ({
    sandboxID: sbx.id,
    templateID: sbx.templateId,
    clientID: "emulator",
    envdVersion: ENVD_VERSION,
    envdAccessToken: sbx.envdAccessToken,
    ...(sbx.trafficAccessToken ? { trafficAccessToken: sbx.trafficAccessToken } : {}),
    domain,
  });

  // ------------------------------------------------------------------ control plane

  const control = async (method: string, path: string, url: URL, body: Record<string, unknown>) => {
    const createPath = flavor === "e2b" ? "/v2/sandboxes" : "/sandboxes";
    if (method === "POST" && path === createPath) {
      if (sandboxes.size >= maxSandboxes) {
        throw new ApiError(
          429,
          `You have reached the maximum number of concurrent sandboxes (${maxSandboxes})`,
        );
      }
      const templateId = String(body.templateID ?? "base");
      const timeout = typeof body.timeout === "number" ? body.timeout : 300;
      const network = (body.network ?? {}) as { allowPublicTraffic?: boolean };
      const id = newId();
      const envs = (body.envVars ?? {}) as Record<string, string>;
      const containerId = await containers.create(id, envs);
      const sbx: EmulatedSandbox = {
        id,
        templateId,
        containerId,
        metadata: (body.metadata ?? {}) as Record<string, string>,
        startedAt: new Date(),
        endAt: new Date(Date.now() + timeout * 1000),
        state: "running",
        envdAccessToken: randomBytes(16).toString("hex"),
        trafficAccessToken:
          network.allowPublicTraffic === false ? randomBytes(16).toString("hex") : undefined,
        autoPause: body.autoPause === true,
        processes: new Map(),
      };
      sandboxes.set(id, sbx);
      schedule(sbx);
      return { status: 201, body: connectAnswer(sbx) };
    }
    if (method === "GET" && (path === "/v2/sandboxes" || path === "/sandboxes")) {
      const wanted = decodeMetadataQuery(url.searchParams.get("metadata"));
      const states = (url.searchParams.get("state") ?? "running,paused").split(",");
      const list = [...sandboxes.values()]
        .filter((s) => states.includes(s.state))
        .filter((s) => Object.entries(wanted).every(([k, v]) => s.metadata[k] === v))
        .map(detail);
      return { status: 200, body: list };
    }
    let match = /^\/(?:v2\/)?sandboxes\/([^/]+)\/connect$/.exec(path);
    if (method === "POST" && match) {
      const sbx = found(decodeURIComponent(match[1] as string));
      const timeout = typeof body.timeout === "number" ? body.timeout : 300;
      const wanted = new Date(Date.now() + timeout * 1000);
      if (sbx.state === "paused") {
        await containers.unpause(sbx.containerId);
        sbx.state = "running";
        // A resumed sandbox gets fresh envd credentials; the old token stops working.
        sbx.envdAccessToken = randomBytes(16).toString("hex");
        sbx.endAt = wanted;
        schedule(sbx);
        return { status: 201, body: connectAnswer(sbx) };
      }
      // Running: E2B only extends the TTL; Novita sets it to what the SDK sent.
      sbx.endAt = flavor === "e2b" && sbx.endAt > wanted ? sbx.endAt : wanted;
      schedule(sbx);
      return { status: 200, body: connectAnswer(sbx) };
    }
    match = /^\/sandboxes\/([^/]+)$/.exec(path);
    if (match && method === "GET")
      return { status: 200, body: detail(found(decodeURIComponent(match[1] as string))) };
    if (match && method === "DELETE") {
      const id = decodeURIComponent(match[1] as string);
      found(id);
      await kill(id);
      return { status: 204 };
    }
    match = /^\/sandboxes\/([^/]+)\/pause$/.exec(path);
    if (match && method === "POST") {
      const sbx = found(decodeURIComponent(match[1] as string));
      if (sbx.state === "paused") throw new ApiError(409, `sandbox "${sbx.id}" is already paused`);
      await pause(sbx);
      return { status: 204 };
    }
    match = /^\/sandboxes\/([^/]+)\/timeout$/.exec(path);
    if (match && method === "POST") {
      const sbx = found(decodeURIComponent(match[1] as string));
      if (typeof body.timeout !== "number") throw new ApiError(400, "timeout must be a number");
      sbx.endAt = new Date(Date.now() + body.timeout * 1000);
      schedule(sbx);
      return { status: 204 };
    }
    throw new ApiError(404, `no route ${method} ${path}`);
  };

  // ------------------------------------------------------------------ envd

  const envdSandbox = (request: IncomingMessage): EmulatedSandbox => {
    const id = request.headers[idHeader];
    const sbx = typeof id === "string" ? sandboxes.get(id) : undefined;
    if (sbx?.state !== "running") {
      throw new ConnectError("unavailable", `sandbox ${String(id)} is not running`);
    }
    const token = request.headers["x-access-token"];
    if (typeof token !== "string" || !safeEqual(token, sbx.envdAccessToken)) {
      throw new ConnectError("unauthenticated", "invalid access token");
    }
    return sbx;
  };

  const b64 = (data: Buffer) => data.toString("base64");

  const startProcess = async (
    sbx: EmulatedSandbox,
    config: EmulatedProcess["config"],
    stdin: boolean,
  ): Promise<{ pid: number; entry: EmulatedProcess }> => {
    const pid = nextPid++;
    const listeners = new Set<(event: unknown) => void>();
    const emit = (event: unknown) => {
      for (const listener of listeners) listener(event);
    };
    const proc = await containers.start(sbx.containerId, {
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
  };

  const streamProcess = (
    request: IncomingMessage,
    response: ServerResponse,
    pid: number,
    entry: EmulatedProcess,
  ) => {
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
  };

  const fsRun = async (sbx: EmulatedSandbox, script: string, ...args: string[]) =>
    containers.run(sbx.containerId, ["/bin/sh", "-c", script, "rakazo-emu", ...args]);

  const entryInfo = async (sbx: EmulatedSandbox, path: string) => {
    const stat = await fsRun(sbx, 'stat -c "%F\t%s\t%a\t%U\t%G\t%Y" -- "$1"', path);
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
  };

  const rpc = async (method: string, request: IncomingMessage, response: ServerResponse) => {
    const streaming = (request.headers["content-type"] ?? "").startsWith("application/connect+json");
    const sbx = envdSandbox(request);
    const message = decodeRequest(await readBody(request), streaming) as Record<string, any>;
    switch (method) {
      case "process.Process/Start": {
        const p = message.process ?? {};
        const { pid, entry } = await startProcess(
          sbx,
          {
            cmd: String(p.cmd),
            args: (p.args ?? []).map(String),
            envs: p.envs ?? {},
            ...(p.cwd ? { cwd: String(p.cwd) } : {}),
          },
          message.stdin === true,
        );
        return streamProcess(request, response, pid, entry);
      }
      case "process.Process/Connect": {
        const pid = Number(message.process?.pid);
        const entry = sbx.processes.get(pid);
        if (!entry) throw new ConnectError("not_found", `process ${pid} not found`);
        return streamProcess(request, response, pid, entry);
      }
      case "process.Process/List":
        return sendUnary(response, {
          processes: [...sbx.processes.entries()].map(([pid, e]) => ({ pid, config: e.config })),
        });
      case "process.Process/SendInput": {
        const entry = sbx.processes.get(Number(message.process?.pid));
        if (!entry) throw new ConnectError("not_found", "process not found");
        const data = message.input?.stdin ?? message.input?.pty;
        if (typeof data === "string") entry.proc.write(Buffer.from(data, "base64"));
        return sendUnary(response, {});
      }
      case "process.Process/CloseStdin": {
        const entry = sbx.processes.get(Number(message.process?.pid));
        if (!entry) throw new ConnectError("not_found", "process not found");
        entry.proc.closeStdin();
        return sendUnary(response, {});
      }
      case "process.Process/SendSignal": {
        const entry = sbx.processes.get(Number(message.process?.pid));
        if (!entry) throw new ConnectError("not_found", "process not found");
        const hostPid = await entry.proc.hostPid;
        if (hostPid > 0) {
          try {
            process.kill(hostPid, message.signal === "SIGNAL_SIGTERM" ? "SIGTERM" : "SIGKILL");
          } catch {}
        }
        return sendUnary(response, {});
      }
      case "filesystem.Filesystem/Stat":
        return sendUnary(response, { entry: await entryInfo(sbx, String(message.path)) });
      case "filesystem.Filesystem/ListDir": {
        const dir = String(message.path);
        const listing = await fsRun(sbx, 'cd -- "$1" && find . -mindepth 1 -maxdepth 1 -printf "%P\\0"', dir);
        if (listing.exitCode !== 0) throw new ConnectError("not_found", `directory ${dir} does not exist`);
        const names = listing.stdout.toString().split("\0").filter(Boolean).sort();
        const entries = [];
        for (const name of names) entries.push(await entryInfo(sbx, `${dir.replace(/\/$/, "")}/${name}`));
        return sendUnary(response, { entries });
      }
      case "filesystem.Filesystem/MakeDir": {
        const path = String(message.path);
        const made = await fsRun(sbx, '[ -e "$1" ] && exit 17; mkdir -p -- "$1"', path);
        if (made.exitCode === 17) throw new ConnectError("already_exists", `${path} already exists`);
        if (made.exitCode !== 0) throw new ConnectError("invalid_argument", made.stderr.toString().trim());
        return sendUnary(response, { entry: await entryInfo(sbx, path) });
      }
      case "filesystem.Filesystem/Remove": {
        const removed = await fsRun(sbx, 'rm -rf -- "$1"', String(message.path));
        if (removed.exitCode !== 0) throw new ConnectError("internal", removed.stderr.toString().trim());
        return sendUnary(response, {});
      }
      case "filesystem.Filesystem/Move": {
        const moved = await fsRun(
          sbx,
          'mv -- "$1" "$2"',
          String(message.source),
          String(message.destination),
        );
        if (moved.exitCode !== 0) throw new ConnectError("not_found", moved.stderr.toString().trim());
        return sendUnary(response, { entry: await entryInfo(sbx, String(message.destination)) });
      }
      default:
        throw new ConnectError("not_found" as const, `unknown method ${method}`);
    }
  };

  /** envd's `/files` (openapi-fetch): raw bytes down, multipart or octet-stream up. */
  const files = async (request: IncomingMessage, response: ServerResponse, url: URL) => {
    let sbx: EmulatedSandbox;
    try {
      sbx = envdSandbox(request);
    } catch (error) {
      const e = error as ConnectError;
      return sendJson(response, e.code === "unauthenticated" ? 401 : 502, {
        code: e.code === "unauthenticated" ? 401 : 502,
        message: e.message,
      });
    }
    if (request.method === "GET") {
      const path = url.searchParams.get("path") ?? "";
      const read = await fsRun(sbx, '[ -f "$1" ] || exit 44; exec cat -- "$1"', path);
      if (read.exitCode === 44)
        return sendJson(response, 404, { code: 404, message: `file ${path} not found` });
      if (read.exitCode !== 0)
        return sendJson(response, 500, { code: 500, message: read.stderr.toString().trim() });
      response.writeHead(200, {
        "content-type": "application/octet-stream",
        "content-length": read.stdout.length,
      });
      return response.end(read.stdout);
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
        const written = await containers.run(
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
    return sendJson(response, 405, { code: 405, message: "method not allowed" });
  };

  // ------------------------------------------------------------------ port hosting

  const HOST_PREFIX = /^\/hosts\/(\d+)-([a-z0-9]+)\.([^/]+)(\/.*)?$/;

  const hosted = (request: IncomingMessage) => {
    const match = HOST_PREFIX.exec(new URL(request.url ?? "/", "http://x").pathname);
    if (!match) return undefined;
    const [, port, id, host, rest] = match;
    const sbx = sandboxes.get(id as string);
    if (sbx?.state !== "running" || host !== domain) {
      throw new ApiError(502, `sandbox ${id} is not running`);
    }
    if (sbx.trafficAccessToken) {
      const token = request.headers["e2b-traffic-access-token"];
      if (typeof token !== "string" || !safeEqual(token, sbx.trafficAccessToken)) {
        throw new ApiError(403, "missing or invalid traffic access token");
      }
    }
    const query = (request.url ?? "").includes("?")
      ? (request.url ?? "").slice((request.url ?? "").indexOf("?"))
      : "";
    return { sbx, port: Number(port), path: `${rest ?? "/"}${query}` };
  };

  const forwardHeaders = (request: IncomingMessage, port: number) => {
    const headers: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(request.headers)) {
      if (v === undefined || k === "e2b-traffic-access-token" || k === "host") continue;
      headers[k] = v;
    }
    headers.host = `127.0.0.1:${port}`;
    return headers;
  };

  // One origin serves every sandbox, so the pinned stream's key names the container and port.
  const proxyHttp = (
    request: IncomingMessage,
    response: ServerResponse,
    target: NonNullable<ReturnType<typeof hosted>>,
  ) =>
    forwardPinned(
      request,
      response,
      {
        key: `${target.sbx.containerId}:${target.port}`,
        connect: () => containers.connectPort(target.sbx.containerId, target.port),
        path: target.path,
        headers: forwardHeaders(request, target.port),
      },
      (error) => sendJson(response, 502, { code: 502, message: `port ${target.port}: ${error.message}` }),
    );

  // ------------------------------------------------------------------ server

  const authorized = (request: IncomingMessage) => {
    const key = request.headers["x-api-key"];
    return typeof key === "string" && safeEqual(key, options.apiKey);
  };

  const server = createServer((request, response) => {
    void (async () => {
      const url = new URL(request.url ?? "/", "http://emulator");
      const path = url.pathname;
      try {
        const target = hosted(request);
        if (target) return proxyHttp(request, response, target);
        if (/^\/(process\.Process|filesystem\.Filesystem)\//.test(path)) {
          try {
            return await rpc(path.slice(1), request, response);
          } catch (error) {
            if (error instanceof ConnectError) return sendUnaryError(response, error);
            throw error;
          }
        }
        if (path === "/files") return await files(request, response, url);
        if (path === "/health") {
          return sendJson(
            response,
            request.headers[idHeader] && sandboxes.get(String(request.headers[idHeader]))?.state === "running"
              ? 204
              : 502,
          );
        }
        if (!authorized(request)) throw new ApiError(401, "Invalid API key");
        const raw =
          request.method === "POST" || request.method === "PUT" ? await readBody(request) : Buffer.alloc(0);
        const body = raw.length > 0 ? (JSON.parse(raw.toString("utf8")) as Record<string, unknown>) : {};
        const answer = await control(request.method ?? "GET", path, url, body);
        return sendJson(response, answer.status, answer.body);
      } catch (error) {
        const status = error instanceof ApiError ? error.status : 500;
        const message = error instanceof Error ? error.message : String(error);
        if (!response.headersSent) sendJson(response, status, { code: status, message });
        else response.destroy();
      }
    })();
  });

  server.on("upgrade", (request: IncomingMessage, socket: Socket, head: Buffer) => {
    void (async () => {
      let target: ReturnType<typeof hosted>;
      try {
        target = hosted(request);
        if (!target) throw new ApiError(404, "no such host");
      } catch (error) {
        const status = error instanceof ApiError ? error.status : 500;
        socket.end(`HTTP/1.1 ${status} Refused\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
        return;
      }
      const relay = await containers.connectPort(target.sbx.containerId, target.port);
      const headers = forwardHeaders(request, target.port);
      const lines = [`${request.method} ${target.path} HTTP/1.1`];
      for (const [k, v] of Object.entries(headers))
        for (const value of [v].flat()) lines.push(`${k}: ${value}`);
      relay.write(`${lines.join("\r\n")}\r\n\r\n`);
      if (head.length > 0) relay.write(head);
      relay.pipe(socket);
      socket.pipe(relay);
      const close = () => {
        relay.destroy();
        socket.destroy();
      };
      relay.on("error", close);
      socket.on("error", close);
      relay.on("end", () => socket.end());
    })().catch(() => socket.destroy());
  });

  await new Promise<void>((resolve) =>
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", resolve),
  );
  const address = server.address() as AddressInfo;
  const url = `http://${address.address}:${address.port}`;
  const portUrlTemplate = `${url}/hosts/{host}`;
  const prefix = flavor === "e2b" ? "E2B" : "NOVITA";

  return {
    url,
    domain,
    portUrlTemplate,
    env: {
      [`${prefix}_API_URL`]: url,
      [`${prefix}_SANDBOX_URL`]: url,
      [`${prefix}_DOMAIN`]: domain,
      [`${prefix}_PORT_URL`]: portUrlTemplate,
    },
    sandboxes: () => [...sandboxes.keys()],
    killSandbox: async (id) => {
      await kill(id);
    },
    expire,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      for (const id of [...sandboxes.keys()]) await kill(id);
    },
  };
}
