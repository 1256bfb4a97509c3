/**
 * Host-side transports to the in-computer desktop supervisor (CMP-8,
 * infra/sandboxes/supervisor). Both speak the same answers, `{ok:true,result}` or
 * `{ok:false,error:{code,message}}`; error answers become `SandboxError`s with the same code.
 * - `unixSocketTransport`: HTTP over the supervisor's Unix socket, reached from the host
 *   through the bind-mounted run dir ("Docker supervision").
 * - `commandTransport`: runs the supervisor CLI through a provider's exec ("the command path"
 *   remote providers use); the CLI starts the daemon when it is not running.
 */
import http from "node:http";
import {
  parseSupervisorAnswer,
  type SupervisorCaller,
  type SupervisorMethod,
  SupervisorProtocolError,
  type SupervisorResult,
} from "@rakazo/protocol";
import { SANDBOX_ERROR_CODES, SandboxError, type SandboxErrorCode } from "./errors.ts";

/**
 * A typed supervisor call (@rakazo/protocol's method table): params checked at compile time,
 * results validated against the method's result schema on arrival.
 */
export type SupervisorTransport = SupervisorCaller;

/** Where the image puts the supervisor bundle; `rakazo-supervisor` on PATH is the same CLI. */
export const SUPERVISOR_CLI_COMMAND: readonly string[] = ["node", "/opt/rakazo/supervisor.mjs"];

function toSandboxCode(code: unknown): SandboxErrorCode {
  return (SANDBOX_ERROR_CODES as readonly unknown[]).includes(code)
    ? (code as SandboxErrorCode)
    : "SANDBOX_PROVIDER_ERROR";
}

/**
 * Only the known, scalar fields of an error's details cross to callers: the computer is not
 * trusted to put anything else into an API answer.
 */
function refusalDetails(raw: unknown): Record<string, unknown> | undefined {
  if (typeof raw !== "object" || raw === null) return undefined;
  const value = raw as { reason?: unknown; active?: unknown; limit?: unknown };
  const details: Record<string, unknown> = {};
  if (typeof value.reason === "string" && /^[a-z]{1,16}$/.test(value.reason)) details.reason = value.reason;
  if (Number.isInteger(value.active)) details.active = value.active;
  if (Number.isInteger(value.limit)) details.limit = value.limit;
  return Object.keys(details).length > 0 ? details : undefined;
}

/**
 * Unwraps one supervisor answer: the result, validated against the method's result schema, or
 * a `SandboxError` carrying the answer's code. Anything else is `SANDBOX_PROVIDER_ERROR`.
 */
export function decodeAnswer<M extends SupervisorMethod>(method: M, raw: unknown): SupervisorResult<M> {
  let answer: ReturnType<typeof parseSupervisorAnswer<M>>;
  try {
    answer = parseSupervisorAnswer(method, raw);
  } catch (error) {
    if (!(error instanceof SupervisorProtocolError)) throw error;
    throw new SandboxError("SANDBOX_PROVIDER_ERROR", error.message);
  }
  if (answer.ok) return answer.result;
  const details = refusalDetails(answer.error.details);
  throw new SandboxError(
    toSandboxCode(answer.error.code),
    `${method}: ${answer.error.message}`,
    details ? { details } : {},
  );
}

const NOT_LISTENING = new Set(["ENOENT", "ECONNREFUSED"]);

/**
 * Connections to supervisors are kept alive between calls, pooled per socket path (each
 * computer's own host-owned link). An idle one is closed after 2 s, well before the daemon's
 * own 5 s (Node's default `keepAliveTimeout`), so the daemon never closes one under a request.
 */
const keptAlive = new http.Agent({ keepAlive: true, maxFreeSockets: 16, timeout: 2_000 });

/**
 * Methods that may run twice with the same outcome: the only ones sent again (once, on a fresh
 * connection) when a kept-alive connection fails before any answer — the daemon restarted or
 * dropped it, and may or may not have seen the request. Any other method fails as a lost
 * connection would (`DESKTOP_UNAVAILABLE`), never twice.
 */
const IDEMPOTENT: ReadonlySet<string> = new Set<SupervisorMethod>([
  "health",
  "desktop.list",
  "desktop.observe",
  "screens.check",
  "screens.connections",
]);
const STALE_CONNECTION = new Set(["ECONNRESET", "EPIPE"]);

function postOverSocket(
  socketPath: string,
  method: string,
  params: unknown,
  timeoutMs: number,
  agent: http.Agent | false = keptAlive,
): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify(params ?? {});
    let answered = false;
    const request = http.request(
      {
        socketPath,
        method: "POST",
        path: `/rpc/${encodeURIComponent(method)}`,
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
        timeout: timeoutMs,
        agent,
      },
      (response) => {
        answered = true;
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("error", reject);
        response.on("end", () => {
          try {
            resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")));
          } catch {
            reject(
              new SandboxError(
                "SANDBOX_PROVIDER_ERROR",
                `${method}: supervisor answered non-JSON (HTTP ${response.statusCode})`,
              ),
            );
          }
        });
      },
    );
    request.on("timeout", () =>
      request.destroy(new SandboxError("DESKTOP_UNAVAILABLE", `${method}: supervisor timed out`)),
    );
    request.on("error", (error: NodeJS.ErrnoException) => {
      const stale = request.reusedSocket && !answered && STALE_CONNECTION.has(error.code ?? "");
      if (stale && IDEMPOTENT.has(method)) {
        resolve(postOverSocket(socketPath, method, params, timeoutMs, false));
      } else reject(error);
    });
    request.end(body);
  });
}

export interface UnixSocketTransportOptions {
  /** Per call; observe of a new bot starts a desktop, so allow tens of seconds. Default 120 s. */
  readonly timeoutMs?: number;
  /**
   * Called when nothing listens on the socket (daemon not started yet, or restarted with the
   * computer); the call is retried once after it resolves. Docker passes a function that runs the
   * CLI's `health` through exec, which starts the daemon.
   */
  readonly startSupervisor?: () => Promise<void>;
  /**
   * How long to keep retrying a socket nobody listens on after `startSupervisor` (default 30 s):
   * a new container's own supervisor may still be loading on a busy host, its predecessor's
   * socket file still in the run dir.
   */
  readonly startWaitMs?: number;
}

/** `post` until the socket accepts, within `waitMs`; other failures end it at once. */
async function postOnceListening(
  post: (method: string, params: unknown) => Promise<unknown>,
  method: string,
  params: unknown,
  waitMs: number,
): Promise<unknown> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      return await post(method, params);
    } catch (error) {
      if (error instanceof SandboxError) throw error;
      const code = (error as NodeJS.ErrnoException).code ?? "";
      if (!NOT_LISTENING.has(code) || Date.now() >= deadline) {
        throw new SandboxError(
          "DESKTOP_UNAVAILABLE",
          `${method}: supervisor unreachable after start (${(error as Error).message})`,
          { cause: error },
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/**
 * `socketPath` may be a resolver, called before every attempt (Docker: a verified link to the
 * computer's socket); its errno `ENOENT` counts as "not listening", its `SandboxError`s (a
 * refused socket) end the call.
 */
export function unixSocketTransport(
  socketPath: string | (() => Promise<string>),
  options: UnixSocketTransportOptions = {},
): SupervisorTransport {
  const timeoutMs = options.timeoutMs ?? 120_000;
  const startWaitMs = options.startWaitMs ?? 30_000;
  const post = async (method: string, params: unknown) =>
    postOverSocket(
      typeof socketPath === "string" ? socketPath : await socketPath(),
      method,
      params,
      timeoutMs,
    );
  return {
    async call(method, params) {
      let answer: unknown;
      try {
        answer = await post(method, params);
      } catch (error) {
        if (error instanceof SandboxError) throw error;
        const code = (error as NodeJS.ErrnoException).code ?? "";
        if (!NOT_LISTENING.has(code) || !options.startSupervisor) {
          throw new SandboxError(
            "DESKTOP_UNAVAILABLE",
            `${method}: supervisor unreachable (${code || (error as Error).message})`,
            {
              cause: error,
            },
          );
        }
        await options.startSupervisor();
        answer = await postOnceListening(post, method, params, startWaitMs);
      }
      return decodeAnswer(method, answer);
    },
  };
}

export interface CommandResult {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
}

export type CommandExec = (argv: string[]) => Promise<CommandResult>;

/**
 * The command path: `<command> <method> '<json>'` through the provider's exec. The CLI prints
 * exactly one JSON answer line; exit 1 with an error answer is a normal, decoded error.
 */
export function commandTransport(
  exec: CommandExec,
  options: { command?: readonly string[] } = {},
): SupervisorTransport {
  const command = options.command ?? SUPERVISOR_CLI_COMMAND;
  return {
    async call(method, params) {
      const result = await exec([...command, method, JSON.stringify(params ?? {})]);
      const line = result.stdout.trim().split("\n").at(-1) ?? "";
      let answer: unknown;
      try {
        answer = JSON.parse(line);
      } catch {
        throw new SandboxError(
          "SANDBOX_PROVIDER_ERROR",
          `${method}: supervisor CLI exited ${result.exitCode} without an answer: ${result.stderr.trim().slice(0, 500)}`,
        );
      }
      return decodeAnswer(method, answer);
    },
  };
}

/**
 * A transport over an in-process handler (tests, or a supervisor embedded in the host): the
 * handler's return value is checked exactly like an answer that crossed a socket.
 */
export function inProcessTransport(
  handle: (method: SupervisorMethod, params: unknown) => unknown | Promise<unknown>,
): SupervisorTransport {
  return {
    async call(method, params) {
      return decodeAnswer(method, { ok: true, result: await handle(method, params) });
    },
  };
}
