// The web app's sessions against the real API over HTTP: the browser gets only an
// HttpOnly, SameSite=Strict session cookie (Secure and `__Host-` over TLS or with an https
// WEB_PUBLIC_URL) sealing the session's own token, never the person's API token; RPCs go through
// the web service with that token; a new web process with the same secret takes the cookie, one
// with another secret does not; revoking the token in the API ends the session at once; sign-out
// revokes it; requests without the app header or from another origin are refused. In Chromium:
// sessions.browser.integration.test.ts, and through a real TLS proxy session.tls.integration.test.ts.
import { apiTokens } from "@rakazo/db";
import { createLogger } from "@rakazo/log";
import { createFakeProvider } from "@rakazo/sandbox";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWebApp } from "./app.ts";
import { APP_HEADER, SECURE_SESSION_COOKIE, SESSION_COOKIE } from "./session.ts";
import { type AppSystem, startAppSystem } from "./testing/app-system.ts";

let system: AppSystem;

beforeAll(async () => {
  system = await startAppSystem({ provider: async (rootDir) => createFakeProvider({ rootDir }) });
}, 60_000);
afterAll(() => system?.close());

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${system.web.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", [APP_HEADER]: "1", ...headers },
    body: JSON.stringify(body),
  });

function cookieOf(response: Response, name = SESSION_COOKIE): { value: string; attributes: string[] } {
  const header = response.headers.getSetCookie().find((c) => c.startsWith(`${name}=`));
  if (!header) throw new Error(`no ${name} cookie in ${response.headers.getSetCookie().join(" | ")}`);
  const [pair = "", ...attributes] = header.split(/;\s*/);
  return { value: pair.slice(name.length + 1), attributes };
}

describe("web app sessions", () => {
  let cookie = "";
  let apiToken = "";

  it("first-run setup signs in with a session cookie; the API token is shown once, never set as a cookie", async () => {
    const setup = await post("/auth/bootstrap", { userName: "ada", spaceName: "Lab", botName: "Bot" });
    expect(setup.status).toBe(200);
    const body = (await setup.json()) as { result: { token: string } };
    apiToken = body.result.token;
    expect(apiToken).toMatch(/^rkz_/);
    const session = cookieOf(setup);
    expect(session.attributes).toEqual(expect.arrayContaining(["HttpOnly", "SameSite=Strict", "Path=/"]));
    // Plain HTTP here: a Secure cookie would never come back.
    expect(session.attributes).not.toContain("Secure");
    expect(session.value).not.toContain("rkz_");
    expect(setup.headers.getSetCookie().join()).not.toContain(apiToken);
    cookie = `${SESSION_COOKIE}=${session.value}`;
    const state = await fetch(`${system.web.url}/auth/session`, { headers: { cookie } });
    expect(await state.json()).toEqual({ result: { signedIn: true } });
  });

  it("the app's RPCs go through the session; without it they are refused", async () => {
    const spaces = await post("/api/rpc/space/list", {}, { cookie });
    expect(spaces.status).toBe(200);
    expect(((await spaces.json()) as { result: { name: string }[] }).result.map((s) => s.name)).toEqual([
      "Lab",
    ]);
    expect((await post("/api/rpc/space/list", {})).status).toBe(401);
    expect((await post("/api/rpc/space/list", {}, { cookie: `${SESSION_COOKIE}=forged` })).status).toBe(401);
    // Setup and revocation are not reachable through the session's proxy.
    expect((await post("/api/rpc/setup/bootstrap", {}, { cookie })).status).toBe(404);
    expect((await post("/api/rpc/token/revoke", {}, { cookie })).status).toBe(404);
  });

  it("refuses state-changing requests without the app header or from another origin", async () => {
    const noHeader = await fetch(`${system.web.url}/api/rpc/space/list`, {
      method: "POST",
      headers: { "content-type": "application/json", cookie },
      body: "{}",
    });
    expect(noHeader.status).toBe(403);
    const foreign = await post("/api/rpc/space/list", {}, { cookie, origin: "https://evil.example" });
    expect(foreign.status).toBe(403);
    const same = await post("/api/rpc/space/list", {}, { cookie, origin: system.web.url });
    expect(same.status).toBe(200);
  });

  it("signs in with an API token by minting its own session token; a wrong token is refused", async () => {
    expect((await post("/auth/signin", { token: "rkz_nope" })).status).toBe(401);
    const signin = await post("/auth/signin", { token: apiToken });
    expect(signin.status).toBe(200);
    const second = `${SESSION_COOKIE}=${cookieOf(signin).value}`;
    expect(second).not.toBe(cookie);
    const sessions = await system.db.select().from(apiTokens).where(eq(apiTokens.name, "web session"));
    expect(sessions).toHaveLength(2);
    expect(sessions.every((t) => t.revokedAt === null && t.kind === "web_session")).toBe(true);
    // Stored with its end: 12 hours after sign-in, as the cookie's Max-Age says.
    expect(cookieOf(signin).attributes).toContain(`Max-Age=${12 * 3600}`);
    for (const t of sessions)
      expect((t.expiresAt?.getTime() ?? 0) - t.createdAt.getTime()).toBeGreaterThan(12 * 3_600_000 - 5_000);
  });

  it("sign-out revokes the session's token in the API and ends the session", async () => {
    const before = await system.db.select().from(apiTokens).where(eq(apiTokens.name, "web session"));
    const out = await post("/auth/signout", {}, { cookie });
    expect(await out.json()).toEqual({ result: { signedIn: false, revoked: true } });
    expect(out.headers.getSetCookie().join()).toMatch(new RegExp(`${SESSION_COOKIE}=;`));
    expect((await post("/api/rpc/space/list", {}, { cookie })).status).toBe(401);
    const after = await system.db.select().from(apiTokens).where(eq(apiTokens.name, "web session"));
    expect(after.filter((t) => t.revokedAt !== null)).toHaveLength(1);
    expect(before.filter((t) => t.revokedAt !== null)).toHaveLength(0);
    // The person's own API token still works: sign-out ends only the web session.
    expect((await system.client(apiToken).call("space/list", {})).length).toBe(1);
  });

  const webApp = (publicUrl?: string, sessionSecret = "the web service's own secret") =>
    createWebApp({
      authority: { authorize: () => Promise.reject(new Error("not used")) },
      log: createLogger({ level: "error", write: () => undefined }),
      screenScript: "",
      apiUrl: system.apiUrl,
      publicUrl,
      sessionSecret,
    });
  const signIn = (app: ReturnType<typeof webApp>, url: string, headers: Record<string, string> = {}) =>
    app.request(url, {
      method: "POST",
      headers: { "content-type": "application/json", [APP_HEADER]: "1", ...headers },
      body: JSON.stringify({ token: apiToken }),
    });

  it("marks the cookie Secure when served over TLS", async () => {
    const res = await signIn(webApp(), "https://localhost/auth/signin");
    expect(res.status).toBe(200);
    expect(cookieOf(res, SECURE_SESSION_COOKIE).attributes).toEqual(
      expect.arrayContaining(["Secure", "HttpOnly", "SameSite=Strict", "Path=/"]),
    );
  });

  it("behind a TLS proxy (https WEB_PUBLIC_URL, plain HTTP upstream): Secure cookie, only that Origin", async () => {
    const app = webApp("https://rakazo.example");
    // What the proxy forwards: http on the upstream address, the browser's https Origin.
    const upstream = "http://127.0.0.1:8788";
    const res = await signIn(app, `${upstream}/auth/signin`, { origin: "https://rakazo.example" });
    expect(res.status).toBe(200);
    const session = cookieOf(res, SECURE_SESSION_COOKIE);
    expect(session.attributes).toEqual(
      expect.arrayContaining(["Secure", "HttpOnly", "SameSite=Strict", "Path=/"]),
    );
    expect(session.attributes.some((a) => /^domain=/i.test(a))).toBe(false);
    const cookie = `${SECURE_SESSION_COOKIE}=${session.value}`;
    const state = await app.request(`${upstream}/auth/session`, { headers: { cookie } });
    expect(await state.json()).toEqual({ result: { signedIn: true } });
    // The plain-HTTP name is not the session there: a cookie set over HTTP cannot stand in.
    const plain = await app.request(`${upstream}/auth/session`, {
      headers: { cookie: `${SESSION_COOKIE}=${session.value}` },
    });
    expect(await plain.json()).toEqual({ result: { signedIn: false } });

    for (const origin of ["https://evil.example", "http://rakazo.example", "https://rakazo.example:8443"])
      expect((await signIn(app, `${upstream}/auth/signin`, { origin })).status, origin).toBe(403);
    // Direct access keeps working from the address the request was sent to.
    expect((await signIn(app, `${upstream}/auth/signin`, { origin: upstream })).status).toBe(200);

    const out = await app.request(`${upstream}/auth/signout`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        [APP_HEADER]: "1",
        origin: "https://rakazo.example",
        cookie,
      },
      body: "{}",
    });
    expect(await out.json()).toEqual({ result: { signedIn: false, revoked: true } });
    expect(out.headers.getSetCookie().join()).toMatch(new RegExp(`^${SECURE_SESSION_COOKIE}=;.*Secure`));
  });

  const rpcVia = (app: ReturnType<typeof webApp>, cookie: string, name = "space/list", body: unknown = {}) =>
    app.request(`http://localhost/api/rpc/${name}`, {
      method: "POST",
      headers: { "content-type": "application/json", [APP_HEADER]: "1", cookie },
      body: JSON.stringify(body),
    });
  const signedIn = async (app: ReturnType<typeof webApp>, cookie: string) =>
    (
      (await (await app.request("http://localhost/auth/session", { headers: { cookie } })).json()) as {
        result: { signedIn: boolean };
      }
    ).result.signedIn;

  it("a new web process with the same secret keeps the session; another secret or a forged cookie does not", async () => {
    const first = webApp();
    const res = await signIn(first, "http://localhost/auth/signin");
    const cookie = `${SESSION_COOKIE}=${cookieOf(res).value}`;
    // What a restart is to sessions: a new app with nothing in memory, the same secret.
    const restarted = webApp();
    expect(await signedIn(restarted, cookie)).toBe(true);
    expect((await rpcVia(restarted, cookie)).status).toBe(200);

    expect(await signedIn(webApp(undefined, "another secret"), cookie)).toBe(false);
    expect((await rpcVia(webApp(undefined, "another secret"), cookie)).status).toBe(401);
    const value = cookieOf(res).value;
    const flipped = `${value.slice(0, 20)}${value[20] === "A" ? "B" : "A"}${value.slice(21)}`;
    expect((await rpcVia(restarted, `${SESSION_COOKIE}=${flipped}`)).status).toBe(401);
    // Sealed for its cookie's name: the plain-HTTP value does not open as the `__Host-` one.
    const tls = await webApp("https://rakazo.example").request("http://127.0.0.1:8788/auth/session", {
      headers: { cookie: `${SECURE_SESSION_COOKIE}=${value}` },
    });
    expect(await tls.json()).toEqual({ result: { signedIn: false } });
    // The cookie is of no use to the API directly: it is not a token there.
    const direct = await fetch(`${system.apiUrl}/rpc/space/list`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${value}` },
      body: "{}",
    });
    expect(direct.status).toBe(401);
  });

  it("revoking the session's token in the API ends it: RPCs at once, /auth/session within a second", async () => {
    const app = webApp();
    const cookie = `${SESSION_COOKIE}=${cookieOf(await signIn(app, "http://localhost/auth/signin")).value}`;
    expect(await signedIn(app, cookie)).toBe(true);
    const person = system.client(apiToken);
    const session = (await person.call("token/list", {})).find((t) => t.kind === "web_session" && !t.current);
    const own = await system.db.select().from(apiTokens).where(eq(apiTokens.kind, "web_session"));
    // The newest web session is this one.
    const newest = own.sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime())[0];
    expect(session?.id).toBe(newest?.id);
    await person.call("token/revoke", { tokenId: newest?.id ?? "" });
    // /auth/session trusted the API's yes just now: it turns within a second.
    const started = Date.now();
    while ((await signedIn(app, cookie)) && Date.now() - started < 3_000)
      await new Promise((r) => setTimeout(r, 50));
    const shownAfterMs = Date.now() - started;
    console.log(`[sessions] /auth/session saw the revocation after ${shownAfterMs} ms`);
    expect(shownAfterMs).toBeLessThanOrEqual(1_000);
    expect(await signedIn(app, cookie)).toBe(false);
    // The API refuses the RPC at once; the browser is told to drop its cookie.
    const refused = await rpcVia(app, cookie);
    expect(refused.status).toBe(401);
    expect(refused.headers.getSetCookie().join()).toMatch(new RegExp(`${SESSION_COOKIE}=;`));
  });

  it("the app revokes one of the person's tokens by id through the session, never its own without one", async () => {
    const app = webApp();
    const cookie = `${SESSION_COOKIE}=${cookieOf(await signIn(app, "http://localhost/auth/signin")).value}`;
    const minted = (await (await rpcVia(app, cookie, "token/create", { name: "script" })).json()) as {
      result: { id: string; token: string };
    };
    expect((await system.client(minted.result.token).call("space/list", {})).length).toBe(1);
    expect((await rpcVia(app, cookie, "token/revoke", {})).status).toBe(404);
    const revoked = await rpcVia(app, cookie, "token/revoke", { tokenId: minted.result.id });
    expect(await revoked.json()).toEqual({ result: { revoked: true, tokenId: minted.result.id } });
    expect((await rpcVia(app, cookie)).status).toBe(200);
    const after = await fetch(`${system.apiUrl}/rpc/space/list`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${minted.result.token}` },
      body: "{}",
    });
    expect(after.status).toBe(401);
  });
});
