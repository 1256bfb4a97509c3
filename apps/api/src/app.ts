import { createHash, randomUUID, timingSafeEqual } from "node:crypto";
import { MAX_ATTACHMENT_BYTES } from "@rakazo/api-contract";
import { isDatabaseUnavailable, pingDatabase } from "@rakazo/db";
import {
  allowHosts,
  bodyTooLarge,
  isAllowedOrigin,
  isBodyTooLarge,
  isLocalClient,
  limitBody,
  notJsonRefusal,
} from "@rakazo/http-edge";
import type { Logger } from "@rakazo/log";
import { createMetrics, type Metrics, mountOperatorRoutes } from "@rakazo/metrics";
import {
  type ActivityFeed,
  AppError,
  authenticateToken,
  type Caller,
  EXTERNAL_CALLER,
  isAppError,
  isInstallationSetUp,
  type RunEventFeed,
  type ServiceContext,
} from "@rakazo/services";
import { type Context, Hono } from "hono";

import { mountActivityStream } from "./activity-stream.ts";
import { HTTP_STATUS } from "./http-errors.ts";
import { mountScreenAuthority } from "./internal-screens.ts";
import { buildOpenApiDocument } from "./openapi.ts";
import type { RpcDefinition } from "./rpc/define.ts";
import { RPCS } from "./rpc/index.ts";
import { inputIssues } from "./rpc/input-issues.ts";
import { runRecorded } from "./rpc/record-activity.ts";
import { enforceRole } from "./rpc/roles.ts";

export interface ApiOptions {
  readonly ctx: ServiceContext;
  readonly log: Logger;
  /** When set, `setup/bootstrap` requires it as its bearer token. */
  readonly bootstrapToken?: string | undefined;
  /**
   * Without a bootstrap token, first-run setup is taken from a client on this machine, or from
   * anywhere with this one-time code as its bearer token (the launcher makes and prints one).
   */
  readonly setupCode?: string | undefined;
  /** Host names the API answers to besides loopback ones (`RAKAZO_ALLOWED_HOSTS`, internal URLs). */
  readonly allowedHosts?: readonly string[];
  readonly rpcs?: readonly RpcDefinition[];
  /** Live activity (TOOL-4); without it `/activity/stream` is not served. */
  readonly activityFeed?: ActivityFeed;
  /** Transcripts of agent runs, streamed beside activity (`run.event`). */
  readonly runEventFeed?: RunEventFeed;
  /** Enables `POST /internal/screens/authorize` for the web service (SCR-5). */
  readonly screenServiceToken?: string | undefined;
  /**
   * What happens when a handler's result does not match its RPC's output schema: `strict`
   * (default; tests and development) answers 500 INTERNAL, `log` (production, main.ts) logs
   * `rpc.output_mismatch` and still sends the result, because the verb has already acted.
   */
  readonly outputValidation?: "strict" | "log";
  /**
   * `EXTERNAL_COMPUTER_TOKEN` (EXT-1): enables the `external/*` RPCs, authorized by
   * this token alone. Only its SHA-256 is kept; unset, those RPCs answer UNKNOWN_RPC.
   */
  readonly externalToken?: string | undefined;
  /** Where RPC timings go and `/metrics` reads; one of its own when not given. */
  readonly metrics?: Metrics;
  /** `RAKAZO_METRICS_TOKEN`: `/metrics` for a scraper that is not on this machine. */
  readonly metricsToken?: string | undefined;
}

const MAX_BODY_BYTES = 16 * 1024 * 1024;
/** The base64 of MAX_ATTACHMENT_BYTES plus room for the rest of the JSON (one byte more is refused). */
const UPLOAD_BODY_BYTES = Math.ceil(MAX_ATTACHMENT_BYTES / 3) * 4 + 64 * 1024;
/** What a route takes before anyone is known: setup, the screen authority, anything unrouted. */
const PRE_AUTH_BODY_BYTES = 16 * 1024;
const UPLOAD_PATH = "/rpc/computer/files/upload";
const BOOTSTRAP_CALLER: Caller = { userId: "", tokenId: "" };

/** The error code a failed request answered, set by `onError`, read by the RPC timing. */
const answeredCodes = new WeakMap<Request, string>();

function bearer(header: string | undefined): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
  return match?.[1];
}

const sha256 = (secret: string): Buffer => createHash("sha256").update(secret).digest();

function sameSecret(a: string, b: string): boolean {
  // Hash first so the comparison is constant-time whatever the lengths.
  return timingSafeEqual(sha256(a), sha256(b));
}

export function createApiApp({ externalToken, ...options }: ApiOptions): Hono {
  const { ctx, log } = options;
  const served: readonly RpcDefinition[] = options.rpcs ?? RPCS;
  const rpcs = new Map(served.map((r) => [r.contract.name, r]));
  const outputValidation = options.outputValidation ?? "strict";
  // Only the hash of the external token lives on (EXT-1); each call is hashed and compared.
  const externalTokenHash = externalToken ? sha256(externalToken) : undefined;
  const metrics = options.metrics ?? createMetrics({ db: ctx.db, service: "api" });
  const app = new Hono();

  // Each body's cap, from the path alone: authentication runs before any body is read, and a
  // route nobody has signed in to takes only a few KiB.
  const bodyLimitFor = (c: Context): number => {
    if (c.req.path === UPLOAD_PATH) return UPLOAD_BODY_BYTES;
    const rpc = c.req.path.startsWith("/rpc/") ? rpcs.get(c.req.path.slice("/rpc/".length)) : undefined;
    return rpc && (rpc.contract.auth === "token" || rpc.contract.auth === "external")
      ? MAX_BODY_BYTES
      : PRE_AUTH_BODY_BYTES;
  };
  const tooLarge = (c: Context, limit = bodyLimitFor(c)) => {
    if (c.req.path !== UPLOAD_PATH) return bodyTooLarge(limit);
    // FIL-3: an upload one byte over the attachment size is FILE_TOO_LARGE, as the RPC says.
    return c.json(
      {
        error: {
          code: "FILE_TOO_LARGE",
          message: `files may hold at most ${MAX_ATTACHMENT_BYTES} bytes`,
          details: { maxBytes: MAX_ATTACHMENT_BYTES },
        },
      },
      413,
    );
  };

  app.use("*", async (c, next) => {
    const started = performance.now();
    const requestId = randomUUID();
    c.header("x-request-id", requestId);
    await next();
    // Method, path and status only: never headers, query strings or bodies.
    log.info("http.request", {
      requestId,
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      durationMs: Math.round(performance.now() - started),
    });
  });

  // RFC 9110/6750: a 401 names its scheme; a token that was sent and refused is `invalid_token`.
  app.use("*", async (c, next) => {
    await next();
    if (c.res.status !== 401 || c.res.headers.has("www-authenticate")) return;
    const sent = bearer(c.req.header("authorization")) !== undefined;
    c.header("WWW-Authenticate", sent ? 'Bearer error="invalid_token"' : "Bearer");
  });

  const allowedHosts = options.allowedHosts ?? [];
  app.use("*", allowHosts(allowedHosts));
  app.use("*", limitBody(bodyLimitFor, { tooLarge }));

  // Every RPC past the edge checks, timed by name and answer. A name the API does not serve is
  // counted as `unknown`: a label per invented path would grow the registry without bound.
  app.use("/rpc/*", async (c, next) => {
    const started = performance.now();
    await next();
    const name = c.req.path.slice("/rpc/".length);
    const code = answeredCodes.get(c.req.raw) ?? (c.res.status < 400 ? "OK" : `HTTP_${c.res.status}`);
    metrics.observeRpc(rpcs.has(name) ? name : "unknown", code, (performance.now() - started) / 1000);
  });

  app.onError((error, c) => {
    if (isBodyTooLarge(error)) return tooLarge(c);
    if (isAppError(error)) {
      answeredCodes.set(c.req.raw, error.code);
      return c.json(
        {
          error: {
            code: error.code,
            message: error.message,
            ...(error.details ? { details: error.details } : {}),
          },
        },
        HTTP_STATUS[error.code],
      );
    }
    if (isDatabaseUnavailable(error)) {
      answeredCodes.set(c.req.raw, "DATABASE_UNAVAILABLE");
      log.warn("http.database_unavailable", { path: c.req.path, error });
      const message = "the database is unavailable; retry shortly";
      return c.json({ error: { code: "DATABASE_UNAVAILABLE", message } }, 503);
    }
    answeredCodes.set(c.req.raw, "INTERNAL");
    log.error("http.unhandled_error", { path: c.req.path, error });
    return c.json({ error: { code: "INTERNAL", message: "internal error" } }, 500);
  });

  app.notFound((c) => c.json({ error: { code: "NOT_FOUND", message: "no such route" } }, 404));

  if (options.activityFeed) mountActivityStream(app, ctx, options.activityFeed, options.runEventFeed);

  app.get("/health", async (c) => {
    await pingDatabase(ctx.db);
    return c.json({ status: "ok", provider: ctx.provider.kind });
  });
  // Whether first-run setup is done, nothing else (the sign-in page hides setup once it is); a
  // yes never turns back into a no, so it is remembered.
  let setUp = false;
  app.get("/setup", async (c) => {
    setUp ||= await isInstallationSetUp(ctx.db);
    return c.json({ setUp });
  });
  // Readiness (database and migrations) apart from liveness, and the operators' metrics.
  mountOperatorRoutes(app, { db: ctx.db, metrics, token: options.metricsToken });

  // Built on first request: it only changes with the code.
  let openApi: unknown;
  app.get("/openapi.json", (c) => {
    openApi ??= buildOpenApiDocument(served.map((r) => r.contract));
    return c.json(openApi);
  });

  if (options.screenServiceToken) mountScreenAuthority(app, ctx, options.screenServiceToken);

  // The web app calls the API from its own service, never from a page: a page's Origin here is
  // another site's script (the API answers no CORS preflight, but simple requests need none).
  app.post("/rpc/*", async (c, next) => {
    const origin = c.req.header("origin");
    if (origin !== undefined && !isAllowedOrigin(origin, allowedHosts)) {
      throw new AppError("FORBIDDEN", "cross-origin request");
    }
    await next();
  });
  app.post("/rpc/*", async (c) => {
    // Names are `<namespace>/<method>` or deeper (`computer/files/list`).
    const name = c.req.path.slice("/rpc/".length);
    const rpc = rpcs.get(name);
    // The external surface is off unless configured: its RPCs then do not exist (EXT-1).
    if (!rpc || (rpc.contract.auth === "external" && !externalTokenHash)) {
      throw new AppError("UNKNOWN_RPC", `unknown RPC ${name.slice(0, 100)}`);
    }

    const secret = bearer(c.req.header("authorization"));
    let caller = BOOTSTRAP_CALLER;
    if (rpc.contract.auth === "token") {
      caller = await authenticateToken(ctx, secret);
    } else if (rpc.contract.auth === "external") {
      if (!externalTokenHash || !timingSafeEqual(sha256(secret ?? ""), externalTokenHash)) {
        throw new AppError("UNAUTHENTICATED", "this RPC requires the external computer token");
      }
      caller = EXTERNAL_CALLER;
    } else if (rpc.contract.auth === "invite") {
      // No bearer: the one-time code in the body is the credential, checked by the verb.
    } else if (options.bootstrapToken !== undefined) {
      if (!sameSecret(secret ?? "", options.bootstrapToken)) {
        throw new AppError("UNAUTHENTICATED", "setup requires the configured bootstrap token");
      }
    } else if (!isLocalClient(c) && !(options.setupCode && sameSecret(secret ?? "", options.setupCode))) {
      // A page the operator visits may post here too: only this machine, or the code, sets up.
      // The web service relays a browser's setup from loopback, marked forwarded unless local.
      throw new AppError(
        "UNAUTHENTICATED",
        "setup from another machine needs the setup code (DATA_DIR/setup-code) as its bearer token",
      );
    }

    // After the token, before the body: browsers send text/plain and form bodies cross-site
    // without a CORS preflight; an RPC's body is JSON.
    const notJson = notJsonRefusal(c);
    if (notJson) return notJson;
    const text = await c.req.text();
    let body: unknown;
    try {
      body = text.trim() === "" ? {} : JSON.parse(text);
    } catch {
      throw new AppError("INVALID_JSON", "request body is not valid JSON");
    }
    const parsed = rpc.contract.input.safeParse(body);
    if (!parsed.success) {
      throw new AppError("INVALID_INPUT", "request body does not match the RPC's input", {
        issues: inputIssues(parsed.error),
      });
    }
    // A viewer reads only (./rpc/roles.ts).
    if (rpc.contract.auth === "token") await enforceRole(ctx, caller, rpc.contract.name, parsed.data);
    const result = await runRecorded(ctx, caller, rpc, parsed.data);
    const checked = rpc.contract.output.safeParse(result);
    if (!checked.success) {
      const issues = checked.error.issues.map((i) => ({ path: i.path.join("."), code: i.code }));
      log.error("rpc.output_mismatch", { rpc: rpc.contract.name, issues });
      if (outputValidation === "strict") {
        throw new AppError("INTERNAL", `${rpc.contract.name} returned a result its output schema rejects`);
      }
      return c.json({ result: result ?? null });
    }
    return c.json({ result: checked.data ?? null });
  });

  app.all("/rpc/*", (c) => {
    const rpc = rpcs.get(c.req.path.slice("/rpc/".length));
    // A served RPC's path under another method: 405 naming the one method it takes.
    if (rpc && (rpc.contract.auth !== "external" || externalTokenHash)) {
      c.header("Allow", "POST");
      throw new AppError("METHOD_NOT_ALLOWED", `${rpc.contract.name} takes POST only`);
    }
    throw new AppError("UNKNOWN_RPC", "RPCs are POST /rpc/<namespace>/<method>");
  });

  return app;
}
