/**
 * A loopback Daytona control plane and toolbox for the REAL `@daytonaio/sdk` (0.218.0): the SDK
 * is pointed at it through `apiUrl`, and reaches the toolbox through the `toolboxProxyUrl` and
 * preview links this server returns (docs/providers.md, "Daytona").
 * Every sandbox is a real container of the computer image (`../machines.ts`).
 *
 * Played faithfully: create answers `started`; stop → `stopped`; start restarts the container
 * and resets every standard preview token; delete → `destroyed` (GET still shows it, list does
 * not); unknown ids are 404 `{statusCode, message, code}`; preview links are private unless the
 * sandbox is public, admitting only `x-daytona-preview-token` (stripped before the port);
 * session commands run async or sync with stdout/stderr apart, their logs followable over a
 * websocket in the SDK's `01 01 01` / `02 02 02` framing; bulk upload and download are the
 * SDK's multipart shapes; auto-stop and TTL act on the injected clock (`sweep()`).
 * Not played: socket.io events (clients use `useDeprecatedPolling`), snapshots and builds (the
 * image is the computer image), PTYs, computer-use (Rakazo drives its own supervisor), and a
 * session's shell state between commands (each command runs in a fresh `bash -c`).
 */
import { createHash, randomBytes, randomUUID, timingSafeEqual } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import busboy from "busboy";
import { WebSocketServer } from "ws";
import { isRecord, readJson, sendJson, shellQuote } from "../http-util.ts";
import { MACHINE_HOME, type MachinePool } from "../machines.ts";
import { type PortListener, startPortListener } from "../port-proxy.ts";

export interface DaytonaEmulatorOptions {
  readonly machines: MachinePool;
  readonly apiKey: string;
  readonly now?: () => number;
}

type DaytonaState =
  | "creating"
  | "started"
  | "stopping"
  | "stopped"
  | "starting"
  | "destroying"
  | "destroyed"
  | "error";

interface SessionCommand {
  readonly id: string;
  readonly command: string;
  exitCode: number | null;
  readonly stdout: Buffer[];
  readonly stderr: Buffer[];
  /** Ordered output for followers: [stream, bytes]. */
  readonly events: ["stdout" | "stderr", Buffer][];
  readonly followers: Set<(event: ["stdout" | "stderr", Buffer] | null) => void>;
}

interface Sandbox {
  readonly id: string;
  readonly name: string;
  state: DaytonaState;
  labels: Record<string, string>;
  readonly env: Record<string, string>;
  readonly public: boolean;
  containerId: string;
  autoStopInterval: number;
  autoArchiveInterval: number;
  autoDeleteInterval: number;
  /** Epoch ms of a wall-clock destroy (ttlMinutes), null = none. */
  destroyAt: number | null;
  lastActivity: number;
  readonly createdAt: number;
  /** Bumped at every start: standard preview tokens reset with it. */
  generation: number;
  readonly previewTokens: Map<number, { token: string; generation: number }>;
  readonly listeners: Map<number, PortListener>;
  readonly sessions: Map<string, Map<string, SessionCommand>>;
  errorReason: string | null;
}

export interface DaytonaEmulator {
  /** The `apiUrl` to hand the SDK. */
  readonly apiUrl: string;
  /** Applies auto-stop and TTL at `now()`; returns the ids acted on. */
  sweep(): Promise<string[]>;
  /** Removes a sandbox entirely behind the client's back (GET answers 404). */
  vanish(id: string): Promise<void>;
  inspect(
    id: string,
  ): { state: DaytonaState; lastActivity: number; labels: Record<string, string> } | undefined;
  /** Every request: method, path without query, status (the secret scan reads these too). */
  readonly requests: readonly { method: string; path: string; status: number }[];
  close(): Promise<void>;
}

const PREVIEW_HEADER = "x-daytona-preview-token";

function sameSecret(given: string, expected: string): boolean {
  return timingSafeEqual(
    createHash("sha256").update(given).digest(),
    createHash("sha256").update(expected).digest(),
  );
}

export async function startDaytonaEmulator(options: DaytonaEmulatorOptions): Promise<DaytonaEmulator> {
  const now = options.now ?? Date.now;
  const sandboxes = new Map<string, Sandbox>();
  const requests: { method: string; path: string; status: number }[] = [];
  let origin = "";

  const fail = (response: http.ServerResponse, statusCode: number, message: string, code?: string) =>
    sendJson(response, statusCode, {
      statusCode,
      message,
      error: http.STATUS_CODES[statusCode],
      ...(code ? { code } : {}),
    });

  const dto = (s: Sandbox) => ({
    id: s.id,
    organizationId: "org_emulator",
    name: s.name,
    user: "user",
    env: s.env,
    labels: s.labels,
    public: s.public,
    networkBlockAll: true,
    target: "local",
    cpu: 2,
    gpu: 0,
    memory: 2,
    disk: 10,
    state: s.state,
    errorReason: s.errorReason ?? undefined,
    recoverable: false,
    autoStopInterval: s.autoStopInterval,
    autoArchiveInterval: s.autoArchiveInterval,
    autoDeleteInterval: s.autoDeleteInterval,
    autoDestroyAt: s.destroyAt === null ? undefined : new Date(s.destroyAt).toISOString(),
    createdAt: new Date(s.createdAt).toISOString(),
    updatedAt: new Date(now()).toISOString(),
    toolboxProxyUrl: `${origin}/toolbox`,
  });

  const find = (idOrName: string) =>
    sandboxes.get(idOrName) ?? [...sandboxes.values()].find((s) => s.name === idOrName);

  const closeListeners = async (s: Sandbox) => {
    for (const listener of s.listeners.values()) await listener.close();
    s.listeners.clear();
  };

  const stopSandbox = async (s: Sandbox) => {
    s.state = "stopping";
    await closeListeners(s);
    await options.machines.stop(s.containerId);
    s.state = "stopped";
  };

  const destroySandbox = async (s: Sandbox) => {
    s.state = "destroying";
    await closeListeners(s);
    await options.machines.remove(s.containerId);
    s.state = "destroyed";
  };

  const previewLink = async (s: Sandbox, port: number) => {
    let grant = s.previewTokens.get(port);
    if (!grant || grant.generation !== s.generation) {
      grant = { token: randomBytes(24).toString("base64url"), generation: s.generation };
      s.previewTokens.set(port, grant);
    }
    let listener = s.listeners.get(port);
    if (!listener) {
      listener = await startPortListener({
        connect: () => options.machines.connectPort(s.containerId, port),
        admit: (request) => {
          const path = request.url ?? "/";
          const given = request.headers[PREVIEW_HEADER];
          const current = s.previewTokens.get(port);
          if (
            !s.public &&
            (typeof given !== "string" ||
              !current ||
              current.generation !== s.generation ||
              !sameSecret(given, current.token))
          ) {
            return { ok: false, status: 401 };
          }
          // Checked per request, not at connect: a pinned stream must not outlive a stop.
          if (s.state !== "started") return { ok: false, status: 502 };
          return { ok: true, path };
        },
        stripHeaders: [PREVIEW_HEADER],
      });
      s.listeners.set(port, listener);
    }
    return { sandboxId: s.id, url: listener.url, token: grant.token };
  };

  // ------------------------------------------------------------------ toolbox

  const runSession = (s: Sandbox, command: SessionCommand) =>
    options.machines
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

  function emit(command: SessionCommand, stream: "stdout" | "stderr", chunk: Buffer) {
    const copy = Buffer.from(chunk);
    (stream === "stdout" ? command.stdout : command.stderr).push(copy);
    command.events.push([stream, copy]);
    for (const follower of command.followers) follower([stream, copy]);
  }

  const writeFile = async (s: Sandbox, path: string, bytes: Buffer) => {
    const quoted = shellQuote(path);
    const result = await options.machines.exec(s.containerId, {
      command: `mkdir -p -- "$(dirname -- ${quoted})" && cat > ${quoted}`,
      stdin: bytes,
    });
    if (result.exitCode !== 0) throw new Error(result.stderr.toString().trim() || "write failed");
  };

  const toolbox = async (
    s: Sandbox,
    rest: string,
    request: http.IncomingMessage,
    response: http.ServerResponse,
    url: URL,
  ) => {
    if (s.state !== "started")
      return fail(response, 409, `sandbox ${s.id} is ${s.state}`, "SANDBOX_NOT_STARTED");
    s.lastActivity = now();
    const method = request.method ?? "GET";
    // `as`: assigned by `on` below; without it TS would narrow the variable to null.
    let match = null as RegExpMatchArray | null;
    const on = (text: string, pattern: RegExp) => {
      match = text.match(pattern);
      return match !== null;
    };
    if (method === "POST" && rest === "/process/execute") {
      const body = await readJson(request);
      if (!isRecord(body) || typeof body.command !== "string")
        return fail(response, 400, "command is required");
      const timeout = typeof body.timeout === "number" && body.timeout > 0 ? body.timeout * 1000 : undefined;
      const result = await options.machines.exec(s.containerId, {
        // The daemon hands the command to a shell; stderr joins the combined result.
        command: `exec 2>&1; ${body.command}`,
        cwd: typeof body.cwd === "string" ? body.cwd : MACHINE_HOME,
        ...(isRecord(body.envs) ? { env: body.envs as Record<string, string> } : {}),
        ...(timeout ? { timeoutMs: timeout } : {}),
      });
      return sendJson(response, 200, { exitCode: result.exitCode, result: result.stdout.toString("utf8") });
    }
    if (method === "POST" && rest === "/process/session") {
      const body = await readJson(request);
      const sessionId = isRecord(body) ? body.sessionId : undefined;
      if (typeof sessionId !== "string" || sessionId === "")
        return fail(response, 400, "sessionId is required");
      if (s.sessions.has(sessionId))
        return fail(response, 409, `session ${sessionId} exists`, "SESSION_EXISTS");
      s.sessions.set(sessionId, new Map());
      response.writeHead(201).end();
      return;
    }
    if (on(rest, /^\/process\/session\/([^/]+)$/)) {
      const session = s.sessions.get(decodeURIComponent(match?.[1] ?? ""));
      if (!session) return fail(response, 404, "session not found", "SESSION_NOT_FOUND");
      if (method === "DELETE") {
        s.sessions.delete(decodeURIComponent(match?.[1] ?? ""));
        response.writeHead(204).end();
        return;
      }
      return sendJson(response, 200, {
        sessionId: decodeURIComponent(match?.[1] ?? ""),
        commands: [...session.values()].map((c) => ({
          id: c.id,
          command: c.command,
          exitCode: c.exitCode ?? undefined,
        })),
      });
    }
    if (method === "POST" && on(rest, /^\/process\/session\/([^/]+)\/exec$/)) {
      const session = s.sessions.get(decodeURIComponent(match?.[1] ?? ""));
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
      const done = runSession(s, command);
      if (body.runAsync === true || body.async === true)
        return sendJson(response, 202, { cmdId: command.id });
      await done;
      const stdout = Buffer.concat(command.stdout).toString("utf8");
      const stderr = Buffer.concat(command.stderr).toString("utf8");
      return sendJson(response, 200, {
        cmdId: command.id,
        exitCode: command.exitCode,
        output: stdout + stderr,
        stdout,
        stderr,
      });
    }
    if (method === "GET" && on(rest, /^\/process\/session\/([^/]+)\/command\/([^/]+)(\/logs)?$/)) {
      const command = s.sessions
        .get(decodeURIComponent(match?.[1] ?? ""))
        ?.get(decodeURIComponent(match?.[2] ?? ""));
      if (!command) return fail(response, 404, "command not found", "COMMAND_NOT_FOUND");
      if (!match?.[3]) {
        return sendJson(response, 200, {
          id: command.id,
          command: command.command,
          exitCode: command.exitCode ?? undefined,
        });
      }
      const stdout = Buffer.concat(command.stdout).toString("utf8");
      const stderr = Buffer.concat(command.stderr).toString("utf8");
      void url;
      return sendJson(response, 200, { output: stdout + stderr, stdout, stderr });
    }
    if (method === "POST" && rest === "/files/bulk-upload") {
      const files = new Map<string, { path?: string; data?: Buffer }>();
      await new Promise<void>((resolve, reject) => {
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
        parser.on("close", resolve);
        parser.on("error", reject);
        request.pipe(parser);
      });
      for (const { path, data } of files.values()) {
        if (!path || !data) return fail(response, 400, "each file needs a path and content");
        await writeFile(s, path, data);
      }
      response.writeHead(200).end();
      return;
    }
    if (method === "POST" && rest === "/files/bulk-download") {
      const body = await readJson(request);
      const paths =
        isRecord(body) && Array.isArray(body.paths) ? body.paths.filter((p) => typeof p === "string") : [];
      const boundary = `emulator${randomBytes(12).toString("hex")}`;
      const parts: Buffer[] = [];
      for (const path of paths as string[]) {
        const read = await options.machines.exec(s.containerId, {
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
      return;
    }
    return fail(response, 404, `no toolbox route ${method} ${rest}`);
  };

  // ------------------------------------------------------------------ control plane

  const control = async (
    request: http.IncomingMessage,
    response: http.ServerResponse,
    path: string,
    url: URL,
  ) => {
    const method = request.method ?? "GET";
    // `as`: assigned by `on` below; without it TS would narrow the variable to null.
    let match = null as RegExpMatchArray | null;
    const on = (text: string, pattern: RegExp) => {
      match = text.match(pattern);
      return match !== null;
    };
    if (method === "POST" && path === "/sandbox") {
      const body = await readJson(request);
      if (!isRecord(body)) return fail(response, 400, "body must be an object");
      const id = randomUUID();
      const name = typeof body.name === "string" && body.name !== "" ? body.name : id;
      if (find(name)) return fail(response, 409, `sandbox named ${name} exists`);
      const ttl = typeof body.ttlMinutes === "number" && body.ttlMinutes > 0 ? body.ttlMinutes : null;
      const containerId = await options.machines.create(`dt-${id.slice(0, 12)}`);
      const sandbox: Sandbox = {
        id,
        name,
        state: "started",
        labels: isRecord(body.labels) ? (body.labels as Record<string, string>) : {},
        env: isRecord(body.env) ? (body.env as Record<string, string>) : {},
        public: body.public === true,
        containerId,
        autoStopInterval: typeof body.autoStopInterval === "number" ? body.autoStopInterval : 15,
        autoArchiveInterval: typeof body.autoArchiveInterval === "number" ? body.autoArchiveInterval : 10080,
        autoDeleteInterval: typeof body.autoDeleteInterval === "number" ? body.autoDeleteInterval : -1,
        destroyAt: ttl === null ? null : now() + ttl * 60_000,
        lastActivity: now(),
        createdAt: now(),
        generation: 1,
        previewTokens: new Map(),
        listeners: new Map(),
        sessions: new Map(),
        errorReason: null,
      };
      sandboxes.set(id, sandbox);
      return sendJson(response, 200, dto(sandbox));
    }
    if (method === "GET" && path === "/sandbox") {
      const labels = url.searchParams.get("labels");
      let wanted: Record<string, string> = {};
      try {
        wanted = labels ? (JSON.parse(labels) as Record<string, string>) : {};
      } catch {
        return fail(response, 400, "labels must be JSON");
      }
      const states = url.searchParams.getAll("states");
      const items = [...sandboxes.values()].filter(
        (s) =>
          s.state !== "destroyed" &&
          (states.length === 0 || states.includes(s.state)) &&
          Object.entries(wanted).every(([k, v]) => s.labels[k] === v),
      );
      return sendJson(response, 200, { items: items.map(dto), total: items.length, nextCursor: null });
    }
    if (on(path, /^\/sandbox\/([^/]+)(\/.*)?$/)) {
      const s = find(decodeURIComponent(match?.[1] ?? ""));
      if (!s) return fail(response, 404, `Sandbox with ID or name ${match?.[1]} not found`, "NOT_FOUND");
      const action = match?.[2] ?? "";
      s.lastActivity = now();
      if (method === "GET" && action === "") return sendJson(response, 200, dto(s));
      if (method === "GET" && action === "/toolbox-proxy-url")
        return sendJson(response, 200, { url: `${origin}/toolbox` });
      if (s.state === "destroyed") return fail(response, 404, `Sandbox ${s.id} is destroyed`, "NOT_FOUND");
      if (method === "DELETE" && action === "") {
        await destroySandbox(s);
        return sendJson(response, 200, dto(s));
      }
      if (method === "POST" && action === "/stop") {
        if (s.state === "started") await stopSandbox(s);
        return sendJson(response, 200, dto(s));
      }
      if (method === "POST" && action === "/start") {
        if (s.state === "stopped") {
          s.state = "starting";
          await options.machines.start(s.containerId);
          s.generation += 1;
          s.sessions.clear();
          s.state = "started";
        }
        return sendJson(response, 200, dto(s));
      }
      if (method === "POST" && action === "/last-activity") {
        response.writeHead(201).end();
        return;
      }
      if (method === "POST" && on(action, /^\/(autostop|autoarchive|autodelete|autopause)\/(-?\d+)$/)) {
        const minutes = Number(match?.[2]);
        if (match?.[1] === "autostop") s.autoStopInterval = minutes;
        if (match?.[1] === "autoarchive") s.autoArchiveInterval = minutes;
        if (match?.[1] === "autodelete") s.autoDeleteInterval = minutes;
        response.writeHead(200).end();
        return;
      }
      if (method === "POST" && on(action, /^\/ttl\/(\d+)$/)) {
        const minutes = Number(match?.[1]);
        s.destroyAt = minutes === 0 ? null : now() + minutes * 60_000;
        response.writeHead(200).end();
        return;
      }
      if (method === "PUT" && action === "/labels") {
        const body = await readJson(request);
        if (!isRecord(body) || !isRecord(body.labels)) return fail(response, 400, "labels required");
        s.labels = body.labels as Record<string, string>;
        return sendJson(response, 200, { labels: s.labels });
      }
      if (method === "GET" && on(action, /^\/ports\/(\d+)\/preview-url$/)) {
        const port = Number(match?.[1]);
        if (port < 3000 || port > 9999) return fail(response, 400, "port must be 3000-9999");
        if (s.state !== "started") return fail(response, 409, `sandbox is ${s.state}`);
        return sendJson(response, 200, await previewLink(s, port));
      }
    }
    return fail(response, 404, `Cannot ${method} ${path}`);
  };

  // ------------------------------------------------------------------ server

  const authorized = (request: http.IncomingMessage) => {
    const auth = request.headers.authorization ?? "";
    return auth.startsWith("Bearer ") && sameSecret(auth.slice(7), options.apiKey);
  };

  const server = http.createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://daytona.invalid");
    response.on("finish", () =>
      requests.push({ method: request.method ?? "", path: url.pathname, status: response.statusCode }),
    );
    if (!authorized(request)) {
      request.resume();
      return fail(response, 401, "Unauthorized");
    }
    const handle = async () => {
      const tool = url.pathname.match(/^\/toolbox\/([^/]+)(\/.*)$/);
      if (tool) {
        const s = sandboxes.get(decodeURIComponent(tool[1] ?? ""));
        if (!s) return fail(response, 404, "sandbox not found", "NOT_FOUND");
        return toolbox(s, tool[2] ?? "", request, response, url);
      }
      if (url.pathname.startsWith("/api/")) return control(request, response, url.pathname.slice(4), url);
      return fail(response, 404, `Cannot ${request.method} ${url.pathname}`);
    };
    handle().catch((error: unknown) => {
      if (response.headersSent) response.destroy();
      else fail(response, 500, error instanceof Error ? error.message : String(error));
    });
  });

  // Followed session logs: one websocket per follower, closed when the command ends.
  const wss = new WebSocketServer({ noServer: true });
  server.on("upgrade", (request, socket: Duplex, head) => {
    const url = new URL(request.url ?? "/", "http://daytona.invalid");
    const match = url.pathname.match(
      /^\/toolbox\/([^/]+)\/process\/session\/([^/]+)\/command\/([^/]+)\/logs$/,
    );
    const s = match ? sandboxes.get(decodeURIComponent(match?.[1] ?? "")) : undefined;
    const command =
      match &&
      s?.sessions.get(decodeURIComponent(match?.[2] ?? ""))?.get(decodeURIComponent(match?.[3] ?? ""));
    if (!authorized(request) || !command) {
      socket.end("HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n");
      return;
    }
    wss.handleUpgrade(request, socket, head, (ws) => {
      const prefix = (stream: "stdout" | "stderr") =>
        Buffer.from(stream === "stdout" ? [1, 1, 1] : [2, 2, 2]);
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
  });

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    apiUrl: `${origin}/api`,
    requests,
    async sweep() {
      const acted: string[] = [];
      for (const s of sandboxes.values()) {
        if (s.state === "started" && s.destroyAt !== null && s.destroyAt <= now()) {
          await destroySandbox(s);
          acted.push(s.id);
        } else if (
          s.state === "started" &&
          s.autoStopInterval > 0 &&
          s.lastActivity + s.autoStopInterval * 60_000 <= now()
        ) {
          await stopSandbox(s);
          acted.push(s.id);
        }
      }
      return acted;
    },
    async vanish(id) {
      const s = sandboxes.get(id);
      if (!s) return;
      await closeListeners(s);
      await options.machines.remove(s.containerId);
      sandboxes.delete(id);
    },
    inspect(id) {
      const s = sandboxes.get(id);
      return s ? { state: s.state, lastActivity: s.lastActivity, labels: { ...s.labels } } : undefined;
    },
    async close() {
      for (const s of sandboxes.values()) {
        await closeListeners(s);
        await options.machines.remove(s.containerId);
      }
      sandboxes.clear();
      for (const client of wss.clients) client.terminate();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
