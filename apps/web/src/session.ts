/**
 * The web app's sessions. Signing in trades the person's API token for a fresh "web session"
 * token (`token/create`, kind `web_session`): the API stores only its hash, with its expiry, and
 * refuses it once revoked or expired. The browser holds that token sealed (AES-256-GCM under a key
 * derived from this service's own secret, SCREEN_SERVICE_TOKEN) in a cookie that is HttpOnly and
 * SameSite=Strict, over TLS also Secure and `__Host-` (so neither plain HTTP nor a sibling
 * subdomain can set or replace it). This service keeps no session state: a restart keeps everyone
 * signed in, and a cookie is useless to anyone calling the API directly. Signing out revokes the
 * token (`token/revoke`). The browser's RPCs go through `/api/rpc/<name>` and the live activity
 * through `/api/activity/stream`, with the session's token added here; the API checks it on every
 * call, so a revoked or expired session is refused at once. Only `/auth/session` asks the API
 * itself, and trusts a yes for half a second.
 *
 * Behind a TLS reverse proxy the request this service sees is plain HTTP on the proxy's
 * upstream address, so TLS and the browser's origin come from configuration (`publicUrl`, from
 * WEB_PUBLIC_URL), never from forwarded headers, which any client of the upstream port can write.
 */
import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from "node:crypto";
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
/** RPCs the browser may not call through the session: setup has its own route. */
const NOT_PROXIED = new Set(["setup/bootstrap", "invite/redeem"]);
const RPC_NAME = /^[a-z]+(\/[a-zA-Z]+){1,2}$/;
/** How long `/auth/session` trusts the API's yes: a revoked session shows well within a second. */
const CONFIRMED_FOR_MS = 500;
/** Bounds the confirmations kept (one per signed-in browser that asked within the last second). */
const MAX_CONFIRMED = 10_000;
const IV_BYTES = 12;
const TAG_BYTES = 16;

interface Session {
  readonly token: string;
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
  /**
   * This service's own secret (SCREEN_SERVICE_TOKEN, kept across restarts): the cookie's sealing
   * key derives from it. Without one a key lives in this process only and a restart signs
   * everyone out.
   */
  readonly secret?: string | undefined;
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

/** Whether an RPC body names a `tokenId` (revoking that token, not the caller's own). */
function hasTokenId(body: string): boolean {
  try {
    const parsed: unknown = JSON.parse(body);
    return isRecord(parsed) && typeof parsed.tokenId === "string";
  } catch {
    return false;
  }
}

const hashOf = (value: string) => createHash("sha256").update(value).digest("hex");

function refusal(code: string, message: string) {
  return { error: { code, message } };
}

/** The cookie's sealing key: its own derivation of the secret, used for nothing else. */
function sealingKey(secret: string | undefined): Buffer {
  if (secret === undefined) return randomBytes(32);
  return Buffer.from(hkdfSync("sha256", secret, "rakazo web", "session cookie v1", 32));
}

/** `token` sealed for the cookie `name` (the name is authenticated: one cannot stand in for the other). */
function seal(key: Buffer, name: string, token: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, iv).setAAD(Buffer.from(name));
  const sealed = Buffer.concat([cipher.update(token, "utf8"), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString("base64url");
}

/** The token a cookie value seals, or undefined for anything this service did not seal. */
function unseal(key: Buffer, name: string, value: string): string | undefined {
  const bytes = Buffer.from(value, "base64url");
  if (bytes.length <= IV_BYTES + TAG_BYTES || bytes.length > 256) return undefined;
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, bytes.subarray(0, IV_BYTES))
      .setAAD(Buffer.from(name))
      .setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    const token = Buffer.concat([
      decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)),
      decipher.final(),
    ]).toString("utf8");
    return TOKEN_SHAPE.test(token) ? token : undefined;
  } catch {
    return undefined;
  }
}

/** Mounts `/auth/*` and `/api/*` on the web app. */
export function mountSessions(app: Hono, options: SessionOptions): void {
  const api = options.apiUrl.replace(/\/+$/, "");
  const ttlMs = options.ttlMs ?? SESSION_TTL_MS;
  const key = sealingKey(options.secret);
  if (options.secret === undefined)
    options.log.warn("web.session_key_ephemeral", { hint: "sessions end when this process does" });
  /** Token hash → until when the API's yes for it holds. */
  const confirmed = new Map<string, number>();
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

  /** The session this request's cookie seals; the API still decides whether it is live. */
  function sessionOf(c: Context): Session | undefined {
    const cookie = cookieOf(c);
    const value = getCookie(c, cookie.name);
    if (!value) return undefined;
    const token = unseal(key, cookie.name, value);
    return token === undefined ? undefined : { token };
  }

  /** Whether the API still takes the session's token; a yes is trusted for CONFIRMED_FOR_MS. */
  async function isLive(session: Session): Promise<boolean> {
    const hash = hashOf(session.token);
    if ((confirmed.get(hash) ?? 0) > Date.now()) return true;
    confirmed.delete(hash);
    const answer = await callApi("token/list", "{}", session.token);
    if (answer.status !== 200) return false;
    if (confirmed.size >= MAX_CONFIRMED) {
      const now = Date.now();
      for (const [stale, until] of confirmed) if (until <= now) confirmed.delete(stale);
      if (confirmed.size >= MAX_CONFIRMED) confirmed.clear();
    }
    confirmed.set(hash, Date.now() + CONFIRMED_FOR_MS);
    return true;
  }

  /** Ends the browser's copy of a session the API refused, so the page shows the sign-in. */
  function forget(c: Context, session: Session): void {
    confirmed.delete(hashOf(session.token));
    const cookie = cookieOf(c);
    deleteCookie(c, cookie.name, { path: "/", secure: cookie.secure });
  }

  /** Starts a session on a fresh "web session" token minted with `token`. */
  async function startSession(c: Context, token: string): Promise<ApiAnswer> {
    const request = { name: "web session", kind: "web_session", ttlSeconds: Math.floor(ttlMs / 1000) };
    const minted = await callApi("token/create", JSON.stringify(request), token);
    const result = isRecord(minted.body) ? minted.body.result : undefined;
    if (minted.status !== 200 || !isRecord(result) || typeof result.token !== "string") return minted;
    const cookie = cookieOf(c);
    setCookie(c, cookie.name, seal(key, cookie.name, result.token), {
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

  app.get("/auth/session", async (c) => {
    const session = sessionOf(c);
    if (!session) return c.json({ result: { signedIn: false } });
    let live: boolean;
    try {
      live = await isLive(session);
    } catch {
      return c.json(refusal("API_UNAVAILABLE", "the API did not answer"), 502);
    }
    if (!live) forget(c, session);
    return c.json({ result: { signedIn: live } });
  });

  // Whether first-run setup is done, for the sign-in page; the API's `GET /setup` says nothing else.
  app.get("/auth/setup", async (c) => {
    const answer = await fetch(`${api}/setup`, { signal: AbortSignal.timeout(10_000) })
      .then(async (r) => (r.ok ? ((await r.json()) as unknown) : null))
      .catch(() => null);
    if (!isRecord(answer) || typeof answer.setUp !== "boolean")
      return c.json(refusal("API_UNAVAILABLE", "the API did not answer"), 502);
    return c.json({ result: { setUp: answer.setUp } });
  });

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

  // A new person joining with an invite code (`invite/redeem`): their first token is minted by
  // the API, this browser gets a session of its own on it, and the token is shown them once.
  app.post("/auth/invite", async (c) => {
    const body = await jsonOf(c);
    if (!isRecord(body)) return c.json(refusal("INVALID_INPUT", "expected a JSON object"), 400);
    const joined = await callApi("invite/redeem", JSON.stringify(body), undefined, !isLocalClient(c));
    const result = isRecord(joined.body) ? joined.body.result : undefined;
    if (joined.status !== 200 || !isRecord(result) || typeof result.token !== "string")
      return c.json(joined.body as object, joined.status as 400);
    const started = await startSession(c, result.token);
    if (started.status !== 200) return c.json(started.body as object, started.status as 400);
    const { spaceId, spaceName, role, token } = result;
    return c.json({ result: { signedIn: true, spaceId, spaceName, role, token } });
  });

  app.post("/auth/signout", async (c) => {
    const session = sessionOf(c);
    const cookie = cookieOf(c);
    deleteCookie(c, cookie.name, { path: "/", secure: cookie.secure });
    if (!session) return c.json({ result: { signedIn: false, revoked: false } });
    confirmed.delete(hashOf(session.token));
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
    // Revoking the session's own token is signing out, which has its route: here only one named.
    if (name === "token/revoke" && !hasTokenId(body))
      return c.json(refusal("UNKNOWN_RPC", "sign out through /auth/signout"), 404);
    let answer: ApiAnswer;
    try {
      answer = await callApi(name, body, session.token);
    } catch {
      return c.json(refusal("API_UNAVAILABLE", "the API did not answer"), 502);
    }
    if (answer.status === 401) forget(c, session);
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
      if (response.status === 401) forget(c, session);
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
