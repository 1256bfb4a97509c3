/**
 * The web app behind the TLS reverse proxy of docs/self-hosting.md (nginx, its documented block,
 * a self-signed certificate) with WEB_PUBLIC_URL set to the https URL the browser uses: in real
 * Chromium, first-run setup, sign-in, live activity and sign-out work through
 * `https://127.0.0.1:<port>/`, and the session cookie is `__Host-`, Secure, HttpOnly and
 * SameSite=Strict. The proxy forwards websocket upgrades to the screen proxy.
 *
 * Skipped locally (fails under CI=true) without nginx, openssl or Chromium (scripts/test-tools.sh).
 */
import { createFakeProvider } from "@rakazo/sandbox";
import { missingOrFail } from "@rakazo/sandbox/testing";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { SECURE_SESSION_COOKIE } from "./session.ts";
import { type AppSystem, startAppSystem } from "./testing/app-system.ts";
import { CHROMIUM } from "./testing/screen-system.ts";
import { freePort, NGINX, startTlsProxy, type TlsProxy } from "./testing/tls-proxy.ts";

const SUITE = "the web app behind a TLS reverse proxy";
/** What `./rakazo start` would print and pass to the API as RAKAZO_SETUP_CODE. */
const SETUP_CODE = "setup-code-for-the-tls-test";
const missing = missingOrFail(SUITE, [NGINX, "openssl", CHROMIUM.executablePath]);

describe.skipIf(missing.length > 0)(
  missing.length > 0 ? `${SUITE} — skipped, missing: ${missing.join(", ")}` : SUITE,
  () => {
    let system: AppSystem;
    let proxy: TlsProxy;
    let browser: Browser;
    let token = "";

    beforeAll(async () => {
      const port = await freePort();
      system = await startAppSystem({
        provider: async (rootDir) => createFakeProvider({ rootDir }),
        webPublicUrl: `https://127.0.0.1:${port}`,
        setupCode: SETUP_CODE,
      });
      proxy = await startTlsProxy({ port, upstream: system.web.url });
      browser = await chromium.launch(CHROMIUM);
    }, 60_000);

    afterAll(async () => {
      await browser?.close();
      await proxy?.close();
      await system?.close();
    });

    async function browse(): Promise<{ context: BrowserContext; page: Page }> {
      // The certificate is self-signed; everything else is what a browser does over TLS.
      const context = await browser.newContext({ ignoreHTTPSErrors: true });
      const page = await context.newPage();
      page.on("pageerror", (error) => console.error(`page error: ${error.message}`));
      return { context, page };
    }

    /** The raw Set-Cookie of the answer to `path` that `act` causes. */
    async function setCookieOf(page: Page, path: string, act: () => Promise<void>): Promise<string> {
      const [response] = await Promise.all([
        page.waitForResponse((r) => new URL(r.url()).pathname === path),
        act(),
      ]);
      expect(response.status(), `${path}: ${await response.text()}`).toBe(200);
      return (await response.headerValue("set-cookie")) ?? "";
    }

    async function expectSecureSession(context: BrowserContext, setCookie: string) {
      expect(setCookie).toMatch(new RegExp(`^${SECURE_SESSION_COOKIE}=[A-Za-z0-9_-]{80,};`));
      for (const attribute of ["Secure", "HttpOnly", "SameSite=Strict", "Path=/"])
        expect(setCookie.split(/;\s*/)).toContain(attribute);
      expect(setCookie).not.toMatch(/Domain=/i);
      const cookies = await context.cookies();
      expect(cookies.map((c) => [c.name, c.secure, c.httpOnly, c.sameSite, c.path])).toEqual([
        [SECURE_SESSION_COOKIE, true, true, "Strict", "/"],
      ]);
    }

    it("first-run setup over https signs in with a Secure, HttpOnly, SameSite=Strict __Host- cookie", async () => {
      const { context, page } = await browse();
      try {
        await page.goto(`${proxy.url}/`);
        await page.getByRole("button", { name: "First run? Set up this installation", exact: true }).click();
        // Through the proxy the person is not on this machine: setup needs the printed code.
        const [refused] = await Promise.all([
          page.waitForResponse((r) => new URL(r.url()).pathname === "/auth/bootstrap"),
          page.getByRole("button", { name: "Set up", exact: true }).click(),
        ]);
        expect(refused.status()).toBe(401);
        await page.getByText("setup code").first().waitFor();
        await page.getByLabel("Bootstrap token or setup code").fill(SETUP_CODE);
        const setCookie = await setCookieOf(page, "/auth/bootstrap", () =>
          page.getByRole("button", { name: "Set up", exact: true }).click(),
        );
        token = (await page.getByTestId("bootstrap-token").textContent()) ?? "";
        expect(token).toMatch(/^rkz_/);
        await page.getByRole("button", { name: "Continue", exact: true }).click();
        await page.getByRole("heading", { name: "Spaces" }).waitFor();
        await expectSecureSession(context, setCookie);
      } finally {
        await context.close();
      }
    });

    it("signs in with a token, reads live activity and signs out, all through the proxy", async () => {
      expect(token, "needs the first test's token").toMatch(/^rkz_/);
      const { context, page } = await browse();
      try {
        await page.goto(`${proxy.url}/`);
        await page.getByLabel("API token").fill(token);
        const setCookie = await setCookieOf(page, "/auth/signin", () =>
          page.getByRole("button", { name: "Sign in", exact: true }).click(),
        );
        await page.getByRole("heading", { name: "Spaces" }).waitFor();
        await expectSecureSession(context, setCookie);

        // The session's RPCs and its server-sent activity stream, as the app opens them.
        const [space] = await system.client(token).call("space/list", {});
        const [computer] = await system.client(token).call("computer/list", { spaceId: space?.id ?? "" });
        expect(computer?.id).toMatch(/^cmp_/);
        const ready = await page.evaluate(
          (computerId) =>
            new Promise<string>((resolve) => {
              const source = new EventSource(`/api/activity/stream?computerId=${computerId}`);
              const timer = setTimeout(() => resolve("no ready event within 5 s"), 5_000);
              source.addEventListener("ready", () => {
                clearTimeout(timer);
                source.close();
                resolve("ready");
              });
            }),
          computer?.id ?? "",
        );
        expect(ready).toBe("ready");

        await page.getByRole("button", { name: "Sign out", exact: true }).click();
        await page.getByLabel("API token").waitFor();
        expect(await context.cookies()).toEqual([]);
      } finally {
        await context.close();
      }
    });

    it("forwards websocket upgrades to the screen proxy", async () => {
      // A well-formed but forged capability: the screen proxy (not the page route, which
      // answers 404) asks the authority and refuses the upgrade with 403.
      const path = `/screens/rs1.k1.${"A".repeat(43)}/websockify`;
      const status = await new Promise<number>((resolve, reject) => {
        const socket = new WebSocket(`${proxy.url.replace("https:", "wss:")}${path}`, {
          ca: proxy.ca,
          origin: proxy.url,
        });
        socket.once("unexpected-response", (request, response) => {
          request.destroy();
          resolve(response.statusCode ?? 0);
        });
        socket.once("open", () => reject(new Error("a forged capability opened a screen")));
        socket.once("error", reject);
      });
      expect(status, await proxy.errorLog()).toBe(403);
      const page = await fetch(`${system.web.url}${path}`);
      expect(page.status).toBe(404);
    });
  },
);
