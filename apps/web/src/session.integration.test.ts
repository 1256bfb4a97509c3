// The web app's sessions against the real API over HTTP: the browser gets only an
// HttpOnly, SameSite=Strict session cookie (Secure and `__Host-` over TLS or with an https
// WEB_PUBLIC_URL), never an API token; RPCs go through the web service with the session's own
// token; sign-out revokes that token in the API; requests without the app header or from another
// origin are refused. Through a real TLS proxy in Chromium: session.tls.integration.test.ts.
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
    expect(sessions.every((t) => t.revokedAt === null)).toBe(true);
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

  const webApp = (publicUrl?: string) =>
    createWebApp({
      authority: { authorize: () => Promise.reject(new Error("not used")) },
      log: createLogger({ level: "error", write: () => undefined }),
      screenScript: "",
      apiUrl: system.apiUrl,
      publicUrl,
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
});
