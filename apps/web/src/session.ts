/**
 * The web app's sessions: the web service holds the API token, the browser holds only
 * a random session cookie (HttpOnly, SameSite=Strict; over TLS also Secure and `__Host-`, so
 * neither plain HTTP nor a sibling subdomain can set or replace it). Signing in trades the
 * person's API token for a fresh "web session" token (`token/create`), which is the only one the
 * service keeps; signing out revokes that one (`token/revoke`). The browser's RPCs go through
 * `/api/rpc/<name>` and the live activity through `/api/activity/stream`, with the session's
 * token added here. Sessions live in this process's memory: a restart signs everyone out.
 *
 * Behind a TLS reverse proxy the request this service sees is plain HTTP on the proxy's
 * upstream address, so TLS and the browser's origin come from configuration (`publicUrl`, from
 * WEB_PUBLIC_URL), never from forwarded headers, which any client of the upstream port can write.
 */
import { createHash, randomBytes } from "node:crypto";
import { isBodyTooLarge, isLocalClient } from "@rakazo/http-edge";
import type { Logger } from "@rakazo/log";
import type { Context, Hono } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";

export const SESSION_COOKIE = "rakazo_session";
/** The cookie's name when it is Secure: the prefix makes browsers refuse it without Secure, Path=/. */
export const SECURE_SESSION_COOKIE = `__Host-${SESSION_COOKIE}`;
/** The header every state-changing request from the app carries (a cross-site form cannot). */
export const APP_HEADER = "x-rakazo-app";
const SESSION_TTL_MS = 12 * 3_600_000;
const TOKEN_SHAPE = /^rkz_[A-Za-z0-9]{43}$/;
/** RPCs the browser may not call through the session: setup has its own route, sign-out too. */
const NOT_PROXIED = new Set(["setup/bootstrap", "token/revoke"]);
const RPC_NAME = /^[a-z]+(\/[a-zA-Z]+){1,2}$/;

interface Session {
  readonly token: string;
  readonly tokenId: string;
  readonly expiresAt: number;
}

export interface SessionOptions {
  /** The API's base URL as the web service reaches it. */
  readonly apiUrl: string;
  /**
   * The web service as browsers reach it (WEB_PUBLIC_URL): its origin is accepted besides the
   * request's own, and an `https` one makes every session cookie Secure.
   */
  readonly publicUrl?: string | undefined;
  readonly log: Logger;
  readonly ttlMs?: number;
}

type ApiAnswer = { status: number; body: unknown };

/** The body as JSON, or null when it is not; a body over the route's cap stays a 413. */
async function jsonOf(c: Context): Promise<unknown> {
  return c.req.json().catch((error: unknown) => {
    if (isBodyTooLarge(error)) throw error;
    return null;
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const hashOf = (value: string) => createHash("sha256").update(value).digest("hex");

function refusal(code: string, message: string) {
  return { error: { code, message } };
}

/** Mounts `/auth/*` and `/api/*` on the web app. */
export function mountSessions(app: Hono, options: SessionOptions): void {
  const api = options.apiUrl.replace(/\/+$/, "");
  const ttlMs = options.ttlMs ?? SESSION_TTL_MS;
  const sessions = new Map<string, Session>();
  const publicOrigin = options.publicUrl === undefined ? undefined : new URL(options.publicUrl).origin;
  const publicTls = publicOrigin?.startsWith("https:") === true;

  /** The cookie this request's session travels in: Secure whenever browsers reach us over TLS. */
  function cookieOf(c: Context): { name: string; secure: boolean } {
    const secure = publicTls || new URL(c.req.url).protocol === "https:";
    return { name: secure ? SECURE_SESSION_COOKIE : SESSION_COOKIE, secure };
  }

  /** One API call; `forwarded` marks it as made for someone who is not on this machine. */
  async function callApi(
    name: string,
    body: string,
    token: string | undefined,
    forwarded = false,
  ): Promise<ApiAnswer> {
    const response = await fetch(`${api}/rpc/${name}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(forwarded ? { "x-forwarded-for": "unknown" } : {}),
      },
      body,
      signal: AbortSignal.timeout(120_000),
    });
    return { status: response.status, body: await response.json().catch(() => null) };
  }

  function sessionOf(c: Context): Session | undefined {
    const value = getCookie(c, cookieOf(c).name);
    if (!value) return undefined;
    const key = hashOf(value);
    const session = sessions.get(key);
    if (!session) return undefined;
    if (session.expiresAt <= Date.now()) {
      sessions.delete(key);
      return undefined;
    }
    return session;
  }

  /** Starts a session on a fresh "web session" token minted with `token`. */
  async function startSession(c: Context, token: string): Promise<ApiAnswer> {
    const minted = await callApi("token/create", JSON.stringify({ name: "web session" }), token);
    const result = isRecord(minted.body) ? minted.body.result : undefined;
    if (minted.status !== 200 || !isRecord(result)) return minted;
    const value = randomBytes(32).toString("base64url");
    sessions.set(hashOf(value), {
      token: String(result.token),
      tokenId: String(result.id),
      expiresAt: Date.now() + ttlMs,
    });
    const cookie = cookieOf(c);
    setCookie(c, cookie.name, value, {
      httpOnly: true,
      sameSite: "Strict",
      secure: cookie.secure,
      path: "/",
      maxAge: Math.floor(ttlMs / 1000),
    });
    options.log.info("web.session_started", {});
    return { status: 200, body: { result: { signedIn: true } } };
  }

  // Cross-site requests cannot add a custom header without a CORS preflight this service never
  // answers, and SameSite=Strict keeps the cookie off them anyway; a foreign Origin is refused.
  // Ours are the public origin and the one the request was addressed to (direct access).
  app.use("/auth/*", guard);
  app.use("/api/*", guard);
  async function guard(c: Context, next: () => Promise<void>) {
    const origin = c.req.header("origin");
    const own = new URL(c.req.url);
    if (origin && origin !== own.origin && origin !== publicOrigin) {
      // The usual cause when the host matches: a TLS proxy in front without WEB_PUBLIC_URL.
      if (URL.parse(origin)?.hostname === own.hostname)
        options.log.warn("web.origin_refused", { hint: "set WEB_PUBLIC_URL to the URL browsers use" });
      return c.json(refusal("FORBIDDEN", "cross-origin request"), 403);
    }
    if (c.req.method !== "GET" && c.req.header(APP_HEADER) !== "1")
      return c.json(refusal("FORBIDDEN", `requests need the ${APP_HEADER} header`), 403);
    await next();
  }

  app.get("/auth/session", (c) => c.json({ result: { signedIn: sessionOf(c) !== undefined } }));

  app.post("/auth/signin", async (c) => {
    const body = await jsonOf(c);
    const token = isRecord(body) ? body.token : undefined;
    if (typeof token !== "string" || !TOKEN_SHAPE.test(token.trim()))
      return c.json(refusal("UNAUTHENTICATED", "that is not an API token (rkz_…)"), 401);
    const answer = await startSession(c, token.trim());
    return c.json(answer.body as object, answer.status as 200);
  });

  app.post("/auth/bootstrap", async (c) => {
    const body = await jsonOf(c);
    if (!isRecord(body)) return c.json(refusal("INVALID_INPUT", "expected a JSON object"), 400);
    const { bootstrapToken, ...input } = body;
    const secret = typeof bootstrapToken === "string" && bootstrapToken !== "" ? bootstrapToken : undefined;
    // This service reaches the API from loopback: it says so when the person is not on this
    // machine, so that the API asks for the setup code as it would of a direct caller.
    const setup = await callApi("setup/bootstrap", JSON.stringify(input), secret, !isLocalClient(c));
    const result = isRecord(setup.body) ? setup.body.result : undefined;
    if (setup.status !== 200 || !isRecord(result) || typeof result.token !== "string")
      return c.json(setup.body as object, setup.status as 400);
    const started = await startSession(c, result.token);
    if (started.status !== 200) return c.json(started.body as object, started.status as 400);
    // The first user's own API token, shown once for scripts and the CLI; the browser keeps the
    // session cookie only, never this token.
    return c.json({ result: { signedIn: true, token: result.token } });
  });

  app.post("/auth/signout", async (c) => {
    const session = sessionOf(c);
    const cookie = cookieOf(c);
    const value = getCookie(c, cookie.name);
    if (value) sessions.delete(hashOf(value));
    deleteCookie(c, cookie.name, { path: "/", secure: cookie.secure });
    if (!session) return c.json({ result: { signedIn: false, revoked: false } });
    const revoked = await callApi("token/revoke", "{}", session.token).catch(() => undefined);
    options.log.info("web.session_ended", { revoked: revoked?.status === 200 });
    return c.json({ result: { signedIn: false, revoked: revoked?.status === 200 } });
  });

  app.post("/api/rpc/*", async (c) => {
    const name = c.req.path.slice("/api/rpc/".length);
    if (!RPC_NAME.test(name) || NOT_PROXIED.has(name))
      return c.json(refusal("UNKNOWN_RPC", "not an RPC the app may call"), 404);
    const session = sessionOf(c);
    if (!session) return c.json(refusal("UNAUTHENTICATED", "sign in first"), 401);
    // Read only now, signed in, within the route's cap (a read over it answers 413).
    const body = await c.req.text();
    let answer: ApiAnswer;
    try {
      answer = await callApi(name, body, session.token);
    } catch {
      return c.json(refusal("API_UNAVAILABLE", "the API did not answer"), 502);
    }
    return c.json(answer.body as object, answer.status as 200);
  });

  app.get("/api/activity/stream", async (c) => {
    const session = sessionOf(c);
    if (!session) return c.json(refusal("UNAUTHENTICATED", "sign in first"), 401);
    const computerId = c.req.query("computerId") ?? "";
    if (!/^cmp_[a-z0-9]{20}$/.test(computerId))
      return c.json(refusal("INVALID_INPUT", "computerId is required"), 400);
    const upstream = new AbortController();
    c.req.raw.signal.addEventListener("abort", () => upstream.abort());
    let response: Response;
    try {
      response = await fetch(`${api}/activity/stream?computerId=${computerId}`, {
        headers: { authorization: `Bearer ${session.token}` },
        signal: upstream.signal,
      });
    } catch {
      return c.json(refusal("API_UNAVAILABLE", "the API did not answer"), 502);
    }
    if (!response.ok || !response.body) {
      const body = await response.json().catch(() => refusal("API_UNAVAILABLE", "no stream"));
      return c.json(body as object, (response.ok ? 502 : response.status) as 400);
    }
    return new Response(response.body, {
      status: 200,
      // nginx holds a proxied response in its buffers unless told not to: events would not arrive.
      headers: {
        "content-type": "text/event-stream",
        "cache-control": "no-cache",
        "x-accel-buffering": "no",
      },
    });
  });
}
