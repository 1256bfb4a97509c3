/**
 * The conformance suite every `PageBrowser` runs (BRW-3..5): the in-process page emulator in
 * unit tests, the supervisor's page methods on real headless Chromium, and the
 * `BROWSER_PROVIDER=emulator` session. The pages are served on loopback by the suite itself.
 *
 * Actions that need scripts (a page replacing its own elements) are outside this suite: the
 * emulator runs none, so those stay in the Chromium suite.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PAGE_MAX_ELEMENTS, PAGE_MAX_TEXT_CHARS, type PageBrowser, type PageSnapshot } from "../provider.ts";

export interface PageBrowserContractOptions {
  readonly name: string;
  /**
   * The browser under test. `navigationTimeoutMs`: how long a load started by an action may take
   * before the action counts as delivered-but-unconfirmed.
   */
  readonly create: (options: { navigationTimeoutMs: number }) => Promise<PageBrowser> | PageBrowser;
  readonly close?: () => Promise<void>;
  /** Per-test timeout; real browsers need longer. */
  readonly timeoutMs?: number;
}

export const PAGE_BROWSER_CONTRACT_TESTS = [
  "snapshot shape",
  "element cap",
  "bounded text",
  "password masking",
  "stale ref after navigation",
  "click, type, select",
  "frames",
  "interrupted batch",
] as const;

const escapeHtml = (s: string) => s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);

const PAGES: Record<string, string> = {
  "/login": `<form method="post" action="/hang"><label>User <input name="u" value="ada"></label>
    <label for="p">Password</label><input id="p" name="p" type="password" value="s3cret-pw">
    <button>Sign in</button></form><a href="/other">Other</a>`,
  "/other": `<p>Other page</p><a href="/login">Back</a>`,
  "/many": Array.from({ length: 500 }, (_, i) => `<button type="button">b${i}</button>`).join(""),
  "/long": Array.from({ length: 400 }, (_, i) => `<p>paragraph ${i} ${"word ".repeat(10)}</p>`).join(""),
  "/form": `<form method="get" action="/echo">
    <label>Query <input name="q"></label>
    <label for="color">Color</label>
    <select id="color" name="color"><option value="red">Red</option><option value="blue">Blue</option></select>
    <label><input type="checkbox" name="agree"> Agree</label>
    <button>Send</button></form>`,
  "/frame": `<p>Framed content below</p><iframe src="/other" title="Embedded"></iframe>`,
};

export function runPageBrowserContract(options: PageBrowserContractOptions): void {
  const navigationTimeoutMs = 1_500;
  let server: http.Server;
  let base = "";
  let page: PageBrowser;
  const posts: string[] = [];
  const bot = "bot-contract";

  const find = (snap: PageSnapshot, name: string) => {
    const element = snap.elements.find((e) => e.name === name);
    if (!element) throw new Error(`no element named ${name} in ${JSON.stringify(snap.elements)}`);
    return element;
  };

  describe(`PageBrowser contract: ${options.name}`, { timeout: options.timeoutMs ?? 20_000 }, () => {
    beforeAll(async () => {
      server = http.createServer((req, res) => {
        const url = new URL(req.url ?? "/", "http://x");
        if (url.pathname === "/hang") {
          posts.push("hang");
          return; // never answers: whether the submission happened is unknown
        }
        const body =
          url.pathname === "/echo"
            ? `<p>q=${escapeHtml(url.searchParams.get("q") ?? "")};color=${escapeHtml(url.searchParams.get("color") ?? "")};agree=${escapeHtml(url.searchParams.get("agree") ?? "")}</p>`
            : PAGES[url.pathname];
        if (body === undefined) return void res.writeHead(404).end();
        res.writeHead(200, { "content-type": "text/html" });
        res.end(`<html><head><title>${url.pathname}</title></head><body>${body}</body></html>`);
      });
      await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      page = await options.create({ navigationTimeoutMs });
    });

    afterAll(async () => {
      await options.close?.();
      server?.closeAllConnections();
      server?.close();
    });

    it("snapshot shape: url, title, text, and elements with refs, roles and names", async () => {
      const navigation = await page.navigate(bot, `${base}/login`);
      expect(navigation).toMatchObject({ url: `${base}/login`, title: "/login" });
      const snap = await page.snapshot(bot);
      expect(snap).toMatchObject({
        url: `${base}/login`,
        title: "/login",
        textTruncated: false,
        omittedElements: 0,
        frames: 0,
      });
      expect(snap.text).toContain("Other");
      for (const element of snap.elements) {
        expect(typeof element.ref).toBe("string");
        expect(typeof element.role).toBe("string");
        expect(typeof element.name).toBe("string");
      }
      expect(new Set(snap.elements.map((e) => e.ref)).size).toBe(snap.elements.length);
      expect(find(snap, "User")).toMatchObject({ role: "textbox", value: "ada" });
      expect(find(snap, "Sign in")).toMatchObject({ role: "button" });
      expect(find(snap, "Other")).toMatchObject({ role: "link", href: `${base}/other` });
      // The same element keeps its ref across snapshots of one document.
      expect(find(await page.snapshot(bot), "User").ref).toBe(find(snap, "User").ref);
    });

    it(`element cap: at most ${PAGE_MAX_ELEMENTS} of 500 buttons, the rest counted (BRW-4)`, async () => {
      await page.navigate(bot, `${base}/many`);
      const snap = await page.snapshot(bot);
      expect(snap.elements).toHaveLength(PAGE_MAX_ELEMENTS);
      expect(snap.omittedElements).toBe(500 - PAGE_MAX_ELEMENTS);
      expect(snap.elements[0]?.name).toBe("b0");
    });

    it(`bounded text: at most ${PAGE_MAX_TEXT_CHARS} characters, marked as cut (BRW-4)`, async () => {
      await page.navigate(bot, `${base}/long`);
      const snap = await page.snapshot(bot);
      expect(snap.text.length).toBeLessThanOrEqual(PAGE_MAX_TEXT_CHARS);
      expect(snap.text.length).toBeGreaterThan(PAGE_MAX_TEXT_CHARS / 2);
      expect(snap.text.startsWith("paragraph 0 word")).toBe(true);
      expect(snap.textTruncated).toBe(true);
    });

    it("password masking: a password's value never appears, from the markup or typed (BRW-3)", async () => {
      await page.navigate(bot, `${base}/login`);
      const first = await page.snapshot(bot);
      const password = find(first, "Password");
      expect(password.value).toBe("••••");
      const filled = await page.act(bot, [{ type: "fill", ref: password.ref, text: "typed-secret" }]);
      expect(filled.error).toBeUndefined();
      const second = await page.snapshot(bot);
      expect(find(second, "Password").value).toBe("••••");
      expect(JSON.stringify([first, filled, second])).not.toMatch(/s3cret-pw|typed-secret/);
    });

    it("stale ref after navigation: rejected, never retargeted to the look-alike (BRW-3)", async () => {
      await page.navigate(bot, `${base}/login`);
      const before = await page.snapshot(bot);
      const link = find(before, "Other");
      await page.navigate(bot, `${base}/other`);
      await page.navigate(bot, `${base}/login`); // identical markup again
      await page.snapshot(bot);
      const result = await page.act(bot, [{ type: "click", ref: link.ref }]);
      expect(result.completed).toBe(0);
      expect(result.error).toMatchObject({ code: "STALE_REF", index: 0, uncertain: false });
      expect(result.url).toBe(`${base}/login`); // the link was not followed
    });

    it("click, type, select: actions change the page as a person's input would", async () => {
      await page.navigate(bot, `${base}/form`);
      const snap = await page.snapshot(bot);
      const result = await page.act(bot, [
        { type: "fill", ref: find(snap, "Query").ref, text: "hello world" },
        { type: "select", ref: find(snap, "Color").ref, value: "blue" },
        { type: "check", ref: find(snap, "Agree").ref, checked: true },
      ]);
      expect(result).toMatchObject({ completed: 3, total: 3, url: `${base}/form`, downloads: [] });
      expect(result.error).toBeUndefined();
      const after = await page.snapshot(bot);
      expect(find(after, "Query").value).toBe("hello world");
      expect(find(after, "Color")).toMatchObject({ role: "combobox", value: "blue" });
      expect(find(after, "Agree")).toMatchObject({ role: "checkbox", checked: true });
      const sent = await page.act(bot, [{ type: "click", ref: find(after, "Send").ref }]);
      expect(sent.error).toBeUndefined();
      expect(sent.url).toBe(`${base}/echo?q=hello+world&color=blue&agree=on`);
      expect((await page.snapshot(bot)).text).toContain("q=hello world;color=blue;agree=on");
    });

    it("frames: counted, listed, and a click on one points to desktop tools (BRW-4)", async () => {
      await page.navigate(bot, `${base}/frame`);
      const snap = await page.snapshot(bot);
      expect(snap.frames).toBe(1);
      expect(snap.text).not.toContain("Other page"); // the frame's content is not in the snapshot
      const frame = snap.elements.find((e) => e.role === "frame");
      expect(frame).toBeDefined();
      const result = await page.act(bot, [{ type: "click", ref: frame?.ref as string }]);
      expect(result.completed).toBe(0);
      expect(result.error).toMatchObject({ code: "NOT_ACTIONABLE", index: 0, uncertain: false });
      expect(result.error?.message).toMatch(/desktop tools/);
    });

    // Last: on a real browser it leaves the tab on a load that never finishes.
    it("interrupted batch: confirmed prefix, uncertain failure, nothing replayed (BRW-5)", async () => {
      await page.navigate(bot, `${base}/login`);
      const snap = await page.snapshot(bot);
      posts.length = 0;
      const result = await page.act(bot, [
        { type: "fill", ref: find(snap, "User").ref, text: "grace" },
        { type: "click", ref: find(snap, "Sign in").ref },
        { type: "click", ref: find(snap, "Other").ref },
      ]);
      expect(result.completed).toBe(1);
      expect(result.total).toBe(3);
      expect(result.error).toMatchObject({ code: "TIMEOUT", index: 1, uncertain: true });
      expect(result.url).not.toBe(`${base}/other`); // the third action never ran
      // Sent once; still once after a while (no retry, no replay).
      await new Promise((done) => setTimeout(done, navigationTimeoutMs));
      expect(posts).toEqual(["hang"]);
    });
  });
}
