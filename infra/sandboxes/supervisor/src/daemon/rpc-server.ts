/**
 * The daemon's transport: HTTP/1.1 on a Unix socket, `POST /rpc/<method>` with a JSON body,
 * answered with `{ok:true,result}` or `{ok:false,error:{code,message}}` (protocol.ts).
 */
import http from "node:http";
import path from "node:path";
import { createPageMethods, PageMethodError } from "@rakazo/page-helper";
import {
  type DeepReadonly,
  isSupervisorMethod,
  SUPERVISOR_METHODS,
  type SupervisorAnswer,
  type SupervisorMethod,
  type SupervisorParsedParams,
  type SupervisorResult,
} from "@rakazo/protocol";
import type { DesktopSlots } from "../desktops/desktop-slots.ts";
import { SupervisorError } from "../errors.ts";
import type { ComputerGateway } from "../gateway/computer-gateway.ts";
import { EXEC_MAX_BODY, runExecRoute } from "../processes/exec-route.ts";
import { ProcessManager } from "../processes/processes.ts";

const MAX_BODY = 1024 * 1024;

function gatewayOf(gateway: ComputerGateway | undefined): ComputerGateway {
  if (!gateway) throw new SupervisorError("DESKTOP_UNAVAILABLE", "this supervisor runs no screen gateway");
  return gateway;
}

type PageMethods = ReturnType<typeof createPageMethods>;
const pageMethods = new WeakMap<DesktopSlots, PageMethods>();

/** The page methods of a supervisor's desktops: each bot's own Chromium, downloads into the workspace. */
function pagesOf(supervisor: DesktopSlots): PageMethods {
  let methods = pageMethods.get(supervisor);
  if (!methods) {
    methods = createPageMethods({
      debuggingPortFor: (botId) => supervisor.debugPortOf(botId),
      downloads: { dir: path.join(supervisor.workspace, "downloads"), workspacePath: "downloads" },
    });
    pageMethods.set(supervisor, methods);
  }
  return methods;
}

/**
 * `page.*` (BRW-1): the bot's desktop is started first when it has none (CMP-4, same cap and
 * per-bot ordering as observe/act); page failures keep their code (`INVALID_ACTION`,
 * `DESKTOP_UNAVAILABLE`, `PAGE_TIMEOUT`). Action failures such as `STALE_REF` are not errors:
 * they are part of the `page.act` result.
 */
function pageCall<M extends "page.navigate" | "page.snapshot" | "page.act">(
  supervisor: DesktopSlots,
  method: M,
  params: SupervisorParsedParams<M>,
): Promise<DeepReadonly<SupervisorResult<M>>> {
  return supervisor.withDesktop(params.botId, async () => {
    try {
      return (await pagesOf(supervisor)[method](params as never)) as DeepReadonly<SupervisorResult<M>>;
    } catch (error) {
      if (error instanceof SupervisorError) throw error;
      if (error instanceof PageMethodError) throw new SupervisorError(error.code, error.message);
      throw new SupervisorError("SANDBOX_PROVIDER_ERROR", `${method}: ${(error as Error).message}`);
    }
  });
}

const processManagers = new WeakMap<DesktopSlots, ProcessManager>();

/** The supervisor's background processes (processes.ts); the daemon kills them all when it stops. */
export function processesOf(supervisor: DesktopSlots): ProcessManager {
  let manager = processManagers.get(supervisor);
  if (!manager) {
    manager = new ProcessManager({ workspace: supervisor.workspace });
    processManagers.set(supervisor, manager);
  }
  return manager;
}

type Handler<M extends SupervisorMethod> = (
  supervisor: DesktopSlots,
  params: SupervisorParsedParams<M>,
  gateway: ComputerGateway | undefined,
) => DeepReadonly<SupervisorResult<M>> | Promise<DeepReadonly<SupervisorResult<M>>>;

/** One handler per method of the protocol's table; a method added there fails to compile here. */
const HANDLERS: { readonly [M in SupervisorMethod]: Handler<M> } = {
  health: (supervisor) => supervisor.health(),
  "desktop.observe": (supervisor, { botId }) => supervisor.observe(botId),
  // Each action is validated on its own, so a malformed one fails the batch at its index.
  "desktop.act": (supervisor, { botId, actions }) => supervisor.act(botId, actions),
  "desktop.release": (supervisor, { botId }) => supervisor.release(botId),
  "desktop.list": (supervisor) => supervisor.list(),
  "desktop.setControlled": (supervisor, { botId, controlled }) => supervisor.setControlled(botId, controlled),
  "screens.configure": (_, params, gateway) => {
    try {
      return gatewayOf(gateway).configure(params);
    } catch (error) {
      if (error instanceof SupervisorError) throw error;
      throw new SupervisorError("INVALID_ACTION", (error as Error).message);
    }
  },
  "screens.revoke": (_, { rules }, gateway) => gatewayOf(gateway).revoke(rules),
  "screens.check": (_, { ticket }, gateway) => {
    // Answers whether the ticket would be served now, and why not (the API's authority asks).
    const verdict = gatewayOf(gateway).verify(ticket);
    return verdict.ok
      ? {
          ok: true,
          policy: verdict.claims.policy,
          slot: verdict.claims.slot,
          generation: verdict.claims.generation,
        }
      : { ok: false, reason: verdict.reason };
  },
  "screens.connections": (_, __, gateway) => gatewayOf(gateway).connections(),
  "terminal.start": (supervisor, { botId, cwd, env }, gateway) =>
    gatewayOf(gateway).terminal.start(botId, {
      cwd: workspacePath(supervisor.workspace, cwd),
      ...(env ? { env } : {}),
    }),
  "terminal.stop": (_, { botId }, gateway) => ({ closed: gatewayOf(gateway).terminal.stop(botId) }),
  "page.navigate": (supervisor, params) => pageCall(supervisor, "page.navigate", params),
  "page.snapshot": (supervisor, params) => pageCall(supervisor, "page.snapshot", params),
  "page.act": (supervisor, params) => pageCall(supervisor, "page.act", params),
  "process.start": (supervisor, params) => processesOf(supervisor).start(params),
  "process.read": (supervisor, params) => processesOf(supervisor).read(params),
  "process.kill": (supervisor, params) => processesOf(supervisor).kill(params),
};

/** A workspace-relative folder as an absolute path that cannot leave the workspace. */
function workspacePath(workspace: string, relative: string): string {
  const resolved = path.resolve(workspace, relative);
  if (resolved !== workspace && !resolved.startsWith(`${workspace}/`)) {
    throw new SupervisorError("INVALID_ACTION", "the terminal's folder must be inside the workspace");
  }
  return resolved;
}

/** Validates `params` with the method's schema from the protocol's table, then runs the method. */
export function dispatch(
  supervisor: DesktopSlots,
  method: string,
  params: unknown,
  gateway?: ComputerGateway,
): Promise<unknown> | unknown {
  if (!isSupervisorMethod(method)) {
    throw new SupervisorError("SANDBOX_PROVIDER_ERROR", `unknown method ${JSON.stringify(method)}`);
  }
  return run(method, supervisor, params, gateway);
}

function run<M extends SupervisorMethod>(
  method: M,
  supervisor: DesktopSlots,
  params: unknown,
  gateway: ComputerGateway | undefined,
): ReturnType<Handler<M>> {
  const parsed = SUPERVISOR_METHODS[method].params.safeParse(params);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue && issue.path.length > 0 ? `${issue.path.join(".")}: ` : "";
    throw new SupervisorError("INVALID_ACTION", `${method}: ${where}${issue?.message ?? "invalid params"}`);
  }
  const handler = HANDLERS[method] as Handler<M>;
  return handler(supervisor, parsed.data as SupervisorParsedParams<M>, gateway) as ReturnType<Handler<M>>;
}

export function toAnswer(error: unknown): SupervisorAnswer {
  if (error instanceof SupervisorError)
    return {
      ok: false,
      error: {
        code: error.code,
        message: error.message,
        ...(error.details ? { details: error.details } : {}),
      },
    };
  return {
    ok: false,
    error: { code: "SANDBOX_PROVIDER_ERROR", message: (error as Error)?.message ?? String(error) },
  };
}

/**
 * Serves one RPC request: `route` is `/rpc/<method>` or `/exec`. The Unix socket serves both;
 * the TCP gateway listener (gateway-rpc.ts) only `/rpc/<method>`, once it has checked the key.
 */
export type RpcHandler = (
  request: http.IncomingMessage,
  response: http.ServerResponse,
  route: string,
) => void;

export function rpcHandler(supervisor: DesktopSlots, gateway?: ComputerGateway): RpcHandler {
  return (request, response, route) => {
    const reply = (status: number, answer: SupervisorAnswer): void => {
      const body = JSON.stringify(answer);
      response.writeHead(status, {
        "content-type": "application/json",
        "content-length": Buffer.byteLength(body),
      });
      response.end(body);
    };
    const isExec = route === "/exec";
    const match = /^\/rpc\/([A-Za-z.]+)$/.exec(route);
    if (request.method !== "POST" || !(match || isExec)) {
      reply(404, { ok: false, error: { code: "SANDBOX_PROVIDER_ERROR", message: "POST /rpc/<method>" } });
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    request.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > (isExec ? EXEC_MAX_BODY : MAX_BODY)) request.destroy();
      else chunks.push(chunk);
    });
    request.on("end", async () => {
      try {
        const text = Buffer.concat(chunks).toString("utf8");
        const params: unknown = text.trim() === "" ? {} : JSON.parse(text);
        if (typeof params !== "object" || params === null || Array.isArray(params)) {
          throw new SupervisorError("INVALID_ACTION", "params must be a JSON object");
        }
        if (isExec) {
          runExecRoute(supervisor.workspace, params, response);
          return;
        }
        const result = await dispatch(supervisor, (match as RegExpExecArray)[1] as string, params, gateway);
        reply(200, { ok: true, result });
      } catch (error) {
        reply(
          200,
          toAnswer(
            error instanceof SyntaxError ? new SupervisorError("INVALID_ACTION", error.message) : error,
          ),
        );
      }
    });
  };
}

export function createRpcServer(supervisor: DesktopSlots, gateway?: ComputerGateway): http.Server {
  const handle = rpcHandler(supervisor, gateway);
  return http.createServer((request, response) => handle(request, response, request.url ?? ""));
}
