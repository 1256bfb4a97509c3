/**
 * A small typed client of Boat's REST API v1 (docs.boat.dev/openapi/boat-v1.yaml; no SDK is on
 * the registry here). Only the routes the adapter uses, with the spec's shapes.
 *
 * What must stay true:
 * - Every error answer becomes a `BoatApiError` with the HTTP status and the envelope's `code`
 *   (`{ok:false, code, message, requestId, error:{code,message,status,details}}`).
 * - 429 is retried after the `Retry-After` the service sent (seconds; else the envelope's
 *   `details.retryAfterSeconds`; else exponential from 1 s), at most `maxRetries` times.
 * - A 409 state race (`sandbox_busy`, `boat_starting`, `idempotency_in_progress`) is retried with
 *   backoff on calls that are safe to repeat (create with its `Idempotency-Key`, stop, resume,
 *   get, host, files). A 409 that is not a race (`sandbox_not_ready`, `idempotency_key_reused`)
 *   is returned at once. Commands are never retried after they may have started (502).
 * - The API key is sent only in `Authorization`; it and port tokens never enter an error text.
 */

export const BOAT_SANDBOX_STATES = [
  "init",
  "provisioning",
  "provisioned",
  "cloning",
  "ready",
  "idle",
  "running",
  "archiving",
  "archived",
  "error",
  "cancelled",
] as const;
export type BoatSandboxState = (typeof BOAT_SANDBOX_STATES)[number];

export interface BoatSandbox {
  readonly id: string;
  readonly name?: string;
  readonly state: BoatSandboxState;
  readonly error?: string | null;
  readonly subdomain?: string | null;
  readonly archiveAfter?: string | null;
  readonly snapshotAvailable?: boolean;
  readonly createdAt?: string | null;
}

export interface BoatCreateRequest {
  readonly type?: "small" | "default" | "large";
  readonly ttlSeconds?: number | null;
  readonly noEnv?: boolean;
  readonly env?: Readonly<Record<string, string>>;
  readonly from?: string;
}

export interface BoatCommandRequest {
  readonly command: string;
  readonly cwd?: string;
  /** 1-600; the service default is 30. */
  readonly timeoutSeconds?: number;
}

export interface BoatCommandResult {
  readonly success: boolean;
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
  readonly timedOut: boolean;
}

export interface BoatDeletionOperation {
  readonly id: string;
  readonly targetId: string;
  readonly status: "pending" | "processing" | "blocked" | "completed";
}

export interface BoatHostedPort {
  readonly port: number;
  /** Carries `_token` unless public: a secret, kept server-side (SCR-4). */
  readonly url: string;
  readonly isProtected: boolean;
}

/** Codes of 409s that are races: the same request succeeds a moment later. */
const RACE_CODES = new Set(["sandbox_busy", "boat_starting", "idempotency_in_progress"]);

export class BoatApiError extends Error {
  override readonly name = "BoatApiError";
  readonly status: number;
  readonly code: string;
  readonly requestId: string | undefined;
  readonly retryAfterMs: number | undefined;
  constructor(status: number, code: string, message: string, requestId?: string, retryAfterMs?: number) {
    super(message);
    this.status = status;
    this.code = code;
    this.requestId = requestId;
    this.retryAfterMs = retryAfterMs;
  }
  /** 404 and 410: the sandbox (or operation) no longer exists. */
  get gone(): boolean {
    return this.status === 404 || this.status === 410;
  }
}

export interface BoatClientOptions {
  /** `https://boat.dev/api/v1`, or an emulator's URL. */
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly fetch?: typeof fetch;
  /** Injected for tests; default `setTimeout`. */
  readonly sleep?: (ms: number) => Promise<void>;
  /** Retries of a 429 or a 409 race before the error is returned. Default 5. */
  readonly maxRetries?: number;
  /** Per-request timeout (ms) on top of a command's own timeout. Default 60 s. */
  readonly requestTimeoutMs?: number;
  /** Called before each retry, e.g. to log (never with secrets). */
  readonly onRetry?: (info: { route: string; status: number; code: string; waitMs: number }) => void;
}

interface Call {
  readonly method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  readonly path: string;
  readonly route: string;
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
  /** Whether a 409 race may be retried (the call is safe to repeat). */
  readonly retryRaces: boolean;
  readonly timeoutMs?: number;
}

function retryAfterOf(response: Response, body: unknown): number | undefined {
  const header = response.headers.get("retry-after");
  if (header !== null) {
    const seconds = Number(header);
    if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
    const date = Date.parse(header);
    if (!Number.isNaN(date)) return Math.max(0, date - Date.now());
  }
  const details = (body as { error?: { details?: { retryAfterSeconds?: unknown } } } | null)?.error?.details;
  if (typeof details?.retryAfterSeconds === "number") return details.retryAfterSeconds * 1000;
  return undefined;
}

export interface BoatClient {
  create(request: BoatCreateRequest, options: { idempotencyKey: string }): Promise<BoatSandbox>;
  get(id: string): Promise<BoatSandbox>;
  list(options?: { limit?: number; cursor?: string; state?: readonly BoatSandboxState[] }): Promise<{
    sandboxes: BoatSandbox[];
    nextCursor: string | null;
  }>;
  /** Every sandbox, following cursors. */
  listAll(): Promise<BoatSandbox[]>;
  update(id: string, changes: { name?: string; ttlSeconds?: number | null }): Promise<BoatSandbox>;
  stop(id: string): Promise<void>;
  resume(id: string, request: { noEnv: boolean; ttlSeconds?: number | null }): Promise<void>;
  command(id: string, request: BoatCommandRequest): Promise<BoatCommandResult>;
  /** The same command with output as it is written (NDJSON frames). */
  commandStream(
    id: string,
    request: BoatCommandRequest,
    onOutput: (stream: "stdout" | "stderr", data: string) => void,
  ): Promise<BoatCommandResult>;
  readFile(id: string, path: string): Promise<Buffer>;
  writeFile(id: string, path: string, data: Uint8Array | string): Promise<void>;
  hostPort(id: string, port: number): Promise<BoatHostedPort>;
  /** Accepts the deletion; 404/410 on the sandbox count as already gone (null). */
  delete(id: string): Promise<BoatDeletionOperation | null>;
  deletion(operationId: string): Promise<BoatDeletionOperation>;
  /** Deletes and polls the operation until `completed` (or gone). */
  deleteAndWait(id: string, options?: { pollMs?: number; timeoutMs?: number }): Promise<void>;
}

export function createBoatClient(options: BoatClientOptions): BoatClient {
  const base = options.baseUrl.replace(/\/$/, "");
  const doFetch = options.fetch ?? fetch;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const maxRetries = options.maxRetries ?? 5;
  const requestTimeoutMs = options.requestTimeoutMs ?? 60_000;

  async function send(call: Call): Promise<Response> {
    for (let attempt = 0; ; attempt += 1) {
      const response = await doFetch(`${base}${call.path}`, {
        method: call.method,
        headers: {
          authorization: `Bearer ${options.apiKey}`,
          accept: "application/json",
          ...(call.body !== undefined ? { "content-type": "application/json" } : {}),
          ...call.headers,
        },
        ...(call.body !== undefined ? { body: JSON.stringify(call.body) } : {}),
        signal: AbortSignal.timeout(call.timeoutMs ?? requestTimeoutMs),
      });
      if (response.ok) return response;
      const text = await response.text();
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
      const envelope = (body ?? {}) as { code?: unknown; message?: unknown; requestId?: unknown };
      const code = typeof envelope.code === "string" ? envelope.code : `http_${response.status}`;
      const message = typeof envelope.message === "string" ? envelope.message : response.statusText;
      const retryAfterMs = retryAfterOf(response, body);
      const error = new BoatApiError(
        response.status,
        code,
        `boat ${call.route}: ${response.status} ${code}: ${message}`,
        typeof envelope.requestId === "string" ? envelope.requestId : undefined,
        retryAfterMs,
      );
      const retriable =
        response.status === 429 || (response.status === 409 && call.retryRaces && RACE_CODES.has(code));
      if (!retriable || attempt >= maxRetries) throw error;
      // As told by the service; otherwise 1 s, 2 s, 4 s … capped at 30 s.
      const waitMs = retryAfterMs ?? Math.min(30_000, 1000 * 2 ** attempt);
      options.onRetry?.({ route: call.route, status: response.status, code, waitMs });
      await sleep(waitMs);
    }
  }

  async function json<T>(call: Call): Promise<T> {
    return (await (await send(call)).json()) as T;
  }

  const sandboxPath = (id: string) => `/sandboxes/${encodeURIComponent(id)}`;

  const client: BoatClient = {
    async create(request, { idempotencyKey }) {
      const answer = await json<{ sandbox: BoatSandbox }>({
        method: "POST",
        path: "/sandboxes",
        route: "create",
        body: request,
        headers: { "idempotency-key": idempotencyKey },
        // Safe: the key makes a repeat return the same sandbox.
        retryRaces: true,
      });
      return answer.sandbox;
    },
    async get(id) {
      return (
        await json<{ sandbox: BoatSandbox }>({
          method: "GET",
          path: sandboxPath(id),
          route: "get",
          retryRaces: true,
        })
      ).sandbox;
    },
    async list(query = {}) {
      const params = new URLSearchParams();
      if (query.limit) params.set("limit", String(query.limit));
      if (query.cursor) params.set("cursor", query.cursor);
      if (query.state) params.set("state", query.state.join(","));
      const answer = await json<{ sandboxes: BoatSandbox[]; pageInfo?: { nextCursor?: string | null } }>({
        method: "GET",
        path: `/sandboxes${params.size > 0 ? `?${params}` : ""}`,
        route: "list",
        retryRaces: true,
      });
      return { sandboxes: answer.sandboxes, nextCursor: answer.pageInfo?.nextCursor ?? null };
    },
    async listAll() {
      const all: BoatSandbox[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 1000; page += 1) {
        const { sandboxes, nextCursor } = await client.list({ limit: 200, ...(cursor ? { cursor } : {}) });
        all.push(...sandboxes);
        if (!nextCursor) break;
        cursor = nextCursor;
      }
      return all;
    },
    async update(id, changes) {
      return (
        await json<{ sandbox: BoatSandbox }>({
          method: "PATCH",
          path: sandboxPath(id),
          route: "update",
          body: changes,
          retryRaces: true,
        })
      ).sandbox;
    },
    async stop(id) {
      await send({
        method: "POST",
        path: `${sandboxPath(id)}/stop`,
        route: "stop",
        body: {},
        retryRaces: true,
      });
    },
    async resume(id, request) {
      await send({
        method: "POST",
        path: `${sandboxPath(id)}/resume`,
        route: "resume",
        body: request,
        retryRaces: true,
      });
    },
    async command(id, request) {
      const answer = await json<BoatCommandResult>({
        method: "POST",
        path: `${sandboxPath(id)}/commands`,
        route: "command",
        body: request,
        // boat_starting means the command never started: safe to send again.
        retryRaces: true,
        timeoutMs: (request.timeoutSeconds ?? 30) * 1000 + requestTimeoutMs,
      });
      return {
        success: answer.success,
        exitCode: answer.exitCode,
        stdout: answer.stdout,
        stderr: answer.stderr,
        timedOut: answer.timedOut,
      };
    },
    async commandStream(id, request, onOutput) {
      const response = await send({
        method: "POST",
        path: `${sandboxPath(id)}/commands`,
        route: "command",
        body: { ...request, stream: true },
        retryRaces: true,
        timeoutMs: (request.timeoutSeconds ?? 30) * 1000 + requestTimeoutMs,
      });
      if (!response.body) throw new BoatApiError(502, "boat_stream_empty", "boat command: empty stream");
      let stdout = "";
      let stderr = "";
      let end: { success?: boolean; exitCode?: number; timedOut?: boolean } | undefined;
      let buffered = "";
      const decoder = new TextDecoder();
      const onLine = (line: string) => {
        if (line.trim() === "") return;
        const frame = JSON.parse(line) as { type: string; data?: string; message?: string; error?: string };
        if (frame.type === "stdout" || frame.type === "stderr") {
          const data = frame.data ?? "";
          if (frame.type === "stdout") stdout += data;
          else stderr += data;
          onOutput(frame.type, data);
        } else if (frame.type === "exit") {
          end = frame as typeof end;
        } else if (frame.type === "error") {
          throw new BoatApiError(
            502,
            frame.error ?? "boat_direct_failed",
            `boat command: ${frame.message ?? ""}`,
          );
        }
      };
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        buffered += decoder.decode(chunk, { stream: true });
        let newline = buffered.indexOf("\n");
        while (newline >= 0) {
          onLine(buffered.slice(0, newline));
          buffered = buffered.slice(newline + 1);
          newline = buffered.indexOf("\n");
        }
      }
      onLine(buffered);
      if (!end || typeof end.exitCode !== "number") {
        // The stream ended without an exit frame: the command may still run. Never retried.
        throw new BoatApiError(502, "boat_direct_failed", "boat command: stream ended without an exit frame");
      }
      return {
        success: end.success ?? end.exitCode === 0,
        exitCode: end.exitCode,
        stdout,
        stderr,
        timedOut: end.timedOut ?? false,
      };
    },
    async readFile(id, path) {
      const params = new URLSearchParams({ path, encoding: "base64" });
      const answer = await json<{ content: string }>({
        method: "GET",
        path: `${sandboxPath(id)}/files?${params}`,
        route: "readFile",
        retryRaces: true,
      });
      return Buffer.from(answer.content, "base64");
    },
    async writeFile(id, path, data) {
      const bytes = typeof data === "string" ? Buffer.from(data) : Buffer.from(data);
      await send({
        method: "PUT",
        path: `${sandboxPath(id)}/files`,
        route: "writeFile",
        body: { path, content: bytes.toString("base64"), encoding: "base64" },
        retryRaces: true,
      });
    },
    async hostPort(id, port) {
      const answer = await json<BoatHostedPort>({
        method: "POST",
        path: `${sandboxPath(id)}/host`,
        route: "host",
        body: { port, public: false },
        retryRaces: true,
      });
      return { port: answer.port, url: answer.url, isProtected: answer.isProtected };
    },
    async delete(id) {
      try {
        const answer = await json<{ operation: BoatDeletionOperation }>({
          method: "DELETE",
          path: sandboxPath(id),
          route: "delete",
          headers: { "x-ascii-confirm-delete": id },
          retryRaces: true,
        });
        return answer.operation;
      } catch (error) {
        if (error instanceof BoatApiError && error.gone) return null;
        throw error;
      }
    },
    async deletion(operationId) {
      return (
        await json<{ operation: BoatDeletionOperation }>({
          method: "GET",
          path: `/deletion-operations/${encodeURIComponent(operationId)}`,
          route: "deletion",
          retryRaces: true,
        })
      ).operation;
    },
    async deleteAndWait(id, { pollMs = 250, timeoutMs = 120_000 } = {}) {
      const operation = await client.delete(id);
      if (!operation) return;
      const deadline = Date.now() + timeoutMs;
      let current = operation;
      while (current.status !== "completed") {
        if (Date.now() > deadline) {
          throw new BoatApiError(504, "deletion_timeout", `boat delete: ${id} still ${current.status}`);
        }
        await sleep(pollMs);
        try {
          current = await client.deletion(operation.id);
        } catch (error) {
          if (error instanceof BoatApiError && error.gone) return;
          throw error;
        }
      }
    },
  };
  return client;
}
