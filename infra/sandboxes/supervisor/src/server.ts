/**
 * The daemon's transport: HTTP/1.1 on a Unix socket, `POST /rpc/<method>` with a JSON body,
 * answered with `{ok:true,result}` or `{ok:false,error:{code,message}}` (protocol.ts).
 */
import http from "node:http";
import path from "node:path";
import { createPageMethods, PageMethodError } from "./page/page-methods.ts";
import type { SupervisorAnswer, SupervisorMethod } from "./protocol.ts";
import type { GatewayKeys, RevocationRule, ScreenGateway } from "./screen-gateway.ts";
import { type Supervisor, SupervisorError } from "./supervisor.ts";

const MAX_BODY = 1024 * 1024;

type Params = Record<string, unknown>;

function str(params: Params, key: string): string {
  const value = params[key];
  if (typeof value !== "string") throw new SupervisorError("INVALID_ACTION", `${key} must be a string`);
  return value;
}

function gatewayOf(gateway: ScreenGateway | undefined): ScreenGateway {
  if (!gateway) throw new SupervisorError("DESKTOP_UNAVAILABLE", "this supervisor runs no screen gateway");
  return gateway;
}

function revocationRules(value: unknown): RevocationRule[] {
  if (!Array.isArray(value) || value.length === 0 || value.length > 1000) {
    throw new SupervisorError("INVALID_ACTION", "rules must be a non-empty array (at most 1000)");
  }
  return value.map((raw) => {
    const rule = (raw ?? {}) as Record<string, unknown>;
    const optional = (key: string, type: "string" | "number") => {
      const v = rule[key];
      if (v === undefined) return undefined;
      if (typeof v !== type) throw new SupervisorError("INVALID_ACTION", `rule.${key} must be a ${type}`);
      return v as never;
    };
    const parsed: RevocationRule = {
      id: optional("id", "string"),
      botId: optional("botId", "string"),
      policy: optional("policy", "string"),
      subject: optional("subject", "string"),
      issuedAtOrBefore: optional("issuedAtOrBefore", "number"),
      expiresAt: optional("expiresAt", "number") ?? 0,
    };
    if (parsed.id === undefined && parsed.issuedAtOrBefore === undefined) {
      throw new SupervisorError("INVALID_ACTION", "a rule needs id or issuedAtOrBefore");
    }
    if (parsed.policy !== undefined && parsed.policy !== "view" && parsed.policy !== "control") {
      throw new SupervisorError("INVALID_ACTION", "rule.policy must be view or control");
    }
    return Object.fromEntries(Object.entries(parsed).filter(([, v]) => v !== undefined)) as RevocationRule;
  });
}

type PageMethods = ReturnType<typeof createPageMethods>;
const pageMethods = new WeakMap<Supervisor, PageMethods>();

/** The page methods of a supervisor's desktops: each bot's own Chromium, downloads into the workspace. */
function pagesOf(supervisor: Supervisor): PageMethods {
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
function pageCall(
  supervisor: Supervisor,
  method: "page.navigate" | "page.snapshot" | "page.act",
  params: Params,
): Promise<unknown> {
  const botId = str(params, "botId");
  return supervisor.withDesktop(botId, async () => {
    try {
      return await pagesOf(supervisor)[method](params);
    } catch (error) {
      if (error instanceof SupervisorError) throw error;
      if (error instanceof PageMethodError) throw new SupervisorError(error.code, error.message);
      throw new SupervisorError("SANDBOX_PROVIDER_ERROR", `${method}: ${(error as Error).message}`);
    }
  });
}

export function dispatch(
  supervisor: Supervisor,
  method: string,
  params: Params,
  gateway?: ScreenGateway,
): Promise<unknown> | unknown {
  switch (method as SupervisorMethod) {
    case "health":
      return supervisor.health();
    case "desktop.observe":
      return supervisor.observe(str(params, "botId"));
    case "desktop.act":
      return supervisor.act(str(params, "botId"), params.actions);
    case "desktop.release":
      return supervisor.release(str(params, "botId"));
    case "desktop.list":
      return supervisor.list();
    case "desktop.setControlled":
      if (typeof params.controlled !== "boolean") {
        throw new SupervisorError("INVALID_ACTION", "controlled must be a boolean");
      }
      return supervisor.setControlled(str(params, "botId"), params.controlled);
    case "screens.configure":
      try {
        return gatewayOf(gateway).configure(params as unknown as GatewayKeys);
      } catch (error) {
        if (error instanceof SupervisorError) throw error;
        throw new SupervisorError("INVALID_ACTION", (error as Error).message);
      }
    case "screens.revoke":
      return gatewayOf(gateway).revoke(revocationRules(params.rules));
    case "screens.check": {
      // Answers whether the ticket would be served now, and why not (the API's authority asks).
      const verdict = gatewayOf(gateway).verify(
        typeof params.ticket === "string" ? params.ticket : undefined,
      );
      return verdict.ok
        ? {
            ok: true,
            policy: verdict.claims.policy,
            slot: verdict.claims.slot,
            generation: verdict.claims.generation,
          }
        : { ok: false, reason: verdict.reason };
    }
    case "screens.connections":
      return gatewayOf(gateway).connections();
    case "page.navigate":
    case "page.snapshot":
    case "page.act":
      return pageCall(supervisor, method as "page.navigate" | "page.snapshot" | "page.act", params);
    default:
      throw new SupervisorError("SANDBOX_PROVIDER_ERROR", `unknown method ${JSON.stringify(method)}`);
  }
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

export function createRpcServer(supervisor: Supervisor, gateway?: ScreenGateway): http.Server {
  return http.createServer((request, response) => {
    const reply = (status: number, answer: SupervisorAnswer): void => {
      const body = JSON.stringify(answer);
      response.writeHead(status, {
        "content-type": "application/json",
        "content-length": Buffer.byteLength(body),
      });
      response.end(body);
    };
    const match = /^\/rpc\/([A-Za-z.]+)$/.exec(request.url ?? "");
    if (request.method !== "POST" || !match) {
      reply(404, { ok: false, error: { code: "SANDBOX_PROVIDER_ERROR", message: "POST /rpc/<method>" } });
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    request.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY) request.destroy();
      else chunks.push(chunk);
    });
    request.on("end", async () => {
      try {
        const text = Buffer.concat(chunks).toString("utf8");
        const params: unknown = text.trim() === "" ? {} : JSON.parse(text);
        if (typeof params !== "object" || params === null || Array.isArray(params)) {
          throw new SupervisorError("INVALID_ACTION", "params must be a JSON object");
        }
        const result = await dispatch(supervisor, match[1] as string, params as Params, gateway);
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
  });
}
