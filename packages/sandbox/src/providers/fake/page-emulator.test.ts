// BRW-3..5, BRW-7: the in-process page browser keeps the contract's promises.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PAGE_MAX_ELEMENTS } from "../../provider.ts";
import { createPageEmulator } from "./page-emulator.ts";

let base: string;
let server: http.Server;
const posts: string[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    const html = (body: string) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end(`<html><head><title>${url.pathname}</title></head><body>${body}</body></html>`);
    };
    if (url.pathname === "/login")
      return html(
        `<form method="post" action="/hang"><label>User <input name="u" value="ada"></label>
         <label for="p">Password</label><input id="p" name="p" type="password" value="s3cret-pw">
         <button>Sign in</button></form><a href="/other">Other</a>`,
      );
    if (url.pathname === "/many")
      return html(Array.from({ length: 500 }, (_, i) => `<button type="button">b${i}</button>`).join(""));
    if (url.pathname === "/other") return html(`<p>Other page</p><a href="/login">Back</a>`);
    if (url.pathname === "/hang") {
      posts.push("hang");
      return; // never answers: the submission's effect is unknown
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
});

describe("page emulator", () => {
  it("never shows a password field's value, typed or from the markup", async () => {
    const page = createPageEmulator();
    await page.navigate("bot", `${base}/login`);
    const first = await page.snapshot("bot");
    const password = first.elements.find((e) => e.name === "Password");
    expect(password?.value).toBe("••••");
    expect(JSON.stringify(first)).not.toContain("s3cret-pw");
    await page.act("bot", [{ type: "fill", ref: password?.ref as string, text: "typed-secret" }]);
    const second = await page.snapshot("bot");
    expect(JSON.stringify(second)).not.toContain("typed-secret");
    expect(second.elements.find((e) => e.name === "User")?.value).toBe("ada");
  });

  it("rejects a ref taken before a navigation instead of retargeting it", async () => {
    const page = createPageEmulator();
    await page.navigate("bot", `${base}/login`);
    const before = await page.snapshot("bot");
    const link = before.elements.find((e) => e.role === "link") as { ref: string };
    await page.navigate("bot", `${base}/other`);
    await page.snapshot("bot");
    await page.navigate("bot", `${base}/login`); // same markup again: the old ref must still fail
    const result = await page.act("bot", [{ type: "click", ref: link.ref }]);
    expect(result.completed).toBe(0);
    expect(result.error).toMatchObject({ code: "STALE_REF", index: 0, uncertain: false });
    expect(result.url).toBe(`${base}/login`);
  });

  it("lists at most 80 of 500 buttons and says how many were left out", async () => {
    const page = createPageEmulator();
    await page.navigate("bot", `${base}/many`);
    const snap = await page.snapshot("bot");
    expect(snap.elements).toHaveLength(PAGE_MAX_ELEMENTS);
    expect(snap.omittedElements).toBe(420);
  });

  it("reports the completed prefix and an uncertain outcome when a submission hangs", async () => {
    const page = createPageEmulator({ requestTimeoutMs: 300 });
    await page.navigate("bot", `${base}/login`);
    const snap = await page.snapshot("bot");
    const user = snap.elements.find((e) => e.name === "User") as { ref: string };
    const submit = snap.elements.find((e) => e.name === "Sign in") as { ref: string };
    const link = snap.elements.find((e) => e.role === "link") as { ref: string };
    const result = await page.act("bot", [
      { type: "fill", ref: user.ref, text: "grace" },
      { type: "click", ref: submit.ref },
      { type: "click", ref: link.ref },
    ]);
    expect(result.completed).toBe(1);
    expect(result.total).toBe(3);
    expect(result.error).toMatchObject({ code: "TIMEOUT", index: 1, uncertain: true });
    expect(posts).toEqual(["hang"]); // sent once, never replayed
    expect(result.url).toBe(`${base}/login`); // the third action never ran
  });
});
