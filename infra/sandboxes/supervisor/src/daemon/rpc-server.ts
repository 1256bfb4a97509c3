/**
 * The daemon's transport: HTTP/1.1 on a Unix socket, `POST /rpc/<method>` with a JSON body,
 * answered with `{ok:true,result}` or `{ok:false,error:{code,message}}` (protocol.ts). Every
 * handler gets the daemon's one `SupervisorContext` (context.ts).
 */
import http from "node:http";
import path from "node:path";
import { PageMethodError } from "@rakazo/page-helper";
import {
  type DeepReadonly,
  isSupervisorMethod,
  SUPERVISOR_METHODS,
  type SupervisorAnswer,
  type SupervisorMethod,
  type SupervisorParsedParams,
  type SupervisorResult,
} from "@rakazo/protocol";
import { SupervisorError } from "../errors.ts";
import type { ComputerGateway } from "../gateway/computer-gateway.ts";
import type { RpcHandler } from "../gateway/rpc.ts";
import { EXEC_MAX_BODY, runExecRoute } from "../processes/exec-route.ts";
import type { SupervisorContext } from "./context.ts";

const MAX_BODY = 1024 * 1024;

function gatewayOf(context: SupervisorContext): ComputerGateway {
  if (!context.gateway)
    throw new SupervisorError("DESKTOP_UNAVAILABLE", "this supervisor runs no screen gateway");
  return context.gateway;
}

/**
 * `page.*` (BRW-1): the bot's desktop is started first when it has none (CMP-4, same cap and
 * per-bot ordering as observe/act); page failures keep their code (`INVALID_ACTION`,
 * `DESKTOP_UNAVAILABLE`, `PAGE_TIMEOUT`). Action failures such as `STALE_REF` are not errors:
 * they are part of the `page.act` result.
 */
function pageCall<M extends "page.navigate" | "page.snapshot" | "page.act">(
  context: SupervisorContext,
  method: M,
  params: SupervisorParsedParams<M>,
): Promise<DeepReadonly<SupervisorResult<M>>> {
  return context.desktops.withDesktop(params.botId, async () => {
    try {
      return (await context.pages[method](params as never)) as DeepReadonly<SupervisorResult<M>>;
    } catch (error) {
      if (error instanceof SupervisorError) throw error;
      if (error instanceof PageMethodError) throw new SupervisorError(error.code, error.message);
      throw new SupervisorError("SANDBOX_PROVIDER_ERROR", `${method}: ${(error as Error).message}`);
    }
  });
}

type Handler<M extends SupervisorMethod> = (
  context: SupervisorContext,
  params: SupervisorParsedParams<M>,
) => DeepReadonly<SupervisorResult<M>> | Promise<DeepReadonly<SupervisorResult<M>>>;

/** One handler per method of the protocol's table; a method added there fails to compile here. */
const HANDLERS: { readonly [M in SupervisorMethod]: Handler<M> } = {
  health: ({ desktops }) => desktops.health(),
  "desktop.observe": ({ desktops }, { botId }) => desktops.observe(botId),
  // Each action is validated on its own, so a malformed one fails the batch at its index.
  "desktop.act": ({ desktops }, { botId, actions }) => desktops.act(botId, actions),
  "desktop.release": ({ desktops }, { botId }) => desktops.release(botId),
  "desktop.closeBrowser": ({ desktops }, { botId }) => desktops.closeBrowser(botId),
  "desktop.list": ({ desktops }) => desktops.list(),
  "desktop.openScreen": ({ desktops }, { botId }) => desktops.openScreen(botId),
  "desktop.setControlled": ({ desktops }, { botId, controlled }) => desktops.setControlled(botId, controlled),
  "screens.configure": (context, params) => {
    try {
      return gatewayOf(context).configure(params);
    } catch (error) {
      if (error instanceof SupervisorError) throw error;
      throw new SupervisorError("INVALID_ACTION", (error as Error).message);
    }
  },
  "screens.revoke": (context, { rules }) => gatewayOf(context).revoke(rules),
  "screens.check": (context, { ticket }) => {
    // Answers whether the ticket would be served now, and why not (the API's authority asks).
    const verdict = gatewayOf(context).verify(ticket);
    return verdict.ok
      ? {
          ok: true,
          policy: verdict.claims.policy,
          slot: verdict.claims.slot,
          generation: verdict.claims.generation,
        }
      : { ok: false, reason: verdict.reason };
  },
  "screens.connections": (context) => gatewayOf(context).connections(),
  "terminal.start": (context, { botId, cwd, env }) =>
    gatewayOf(context).terminal.start(botId, {
      cwd: workspacePath(context.workspace, cwd),
      ...(env ? { env } : {}),
    }),
  "terminal.stop": (context, { botId }) => ({ closed: gatewayOf(context).terminal.stop(botId) }),
  "page.navigate": (context, params) => pageCall(context, "page.navigate", params),
  "page.snapshot": (context, params) => pageCall(context, "page.snapshot", params),
  "page.act": (context, params) => pageCall(context, "page.act", params),
  "process.start": ({ processes }, params) => processes.start(params),
  "process.read": ({ processes }, params) => processes.read(params),
  "process.kill": ({ processes }, params) => processes.kill(params),
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
  context: SupervisorContext,
  method: string,
  params: unknown,
): Promise<unknown> | unknown {
  if (!isSupervisorMethod(method)) {
    throw new SupervisorError("SANDBOX_PROVIDER_ERROR", `unknown method ${JSON.stringify(method)}`);
  }
  return run(method, context, params);
}

function run<M extends SupervisorMethod>(
  method: M,
  context: SupervisorContext,
  params: unknown,
): ReturnType<Handler<M>> {
  const parsed = SUPERVISOR_METHODS[method].params.safeParse(params);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue && issue.path.length > 0 ? `${issue.path.join(".")}: ` : "";
    throw new SupervisorError("INVALID_ACTION", `${method}: ${where}${issue?.message ?? "invalid params"}`);
  }
  const handler = HANDLERS[method] as Handler<M>;
  return handler(context, parsed.data as SupervisorParsedParams<M>) as ReturnType<Handler<M>>;
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

/** The RPC of `context`'s capabilities, for the Unix socket and the gateway's TCP route (gateway/rpc.ts). */
export function rpcHandler(context: SupervisorContext): RpcHandler {
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
          runExecRoute(context.workspace, params, response);
          return;
        }
        const result = await dispatch(context, (match as RegExpExecArray)[1] as string, params);
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

export function createRpcServer(context: SupervisorContext): http.Server {
  const handle = rpcHandler(context);
  return http.createServer((request, response) => handle(request, response, request.url ?? ""));
}
