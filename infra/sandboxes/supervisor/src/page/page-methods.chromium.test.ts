// BRW-2..5 against real headless Chromium: a page served on loopback, CDP on a loopback port.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import http from "node:http";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromiumArgv, planStack } from "../stack-argv.ts";
import { listeningSocketsOf } from "../testing/listening-sockets.ts";
import { safeDownloadName } from "./downloads.ts";
import { createPageMethods, MAX_ELEMENTS } from "./page-methods.ts";

const CHROMIUM = "/usr/bin/chromium";
let base: string;
let server: http.Server;
let chromium: ChildProcess;
let profile: string;
let port: number;
const posts: string[] = [];

const pages: Record<string, string> = {
  "/login": `<form method="post" action="/hang"><label>User <input name="u" value="ada"></label>
    <label for="p">Password</label><input id="p" name="p" type="password" value="s3cret-pw">
    <button>Sign in</button></form><a href="/other">Other</a>
    <button id="swap" type="button" onclick="this.replaceWith(Object.assign(document.createElement('button'),{id:'swap',textContent:'Swap'}))">Swap</button>`,
  "/other": `<p>Other page</p><a href="/login">Back</a>`,
  "/export": `<form method="post" action="/csv"><button>Export CSV</button></form>`,
  "/many": Array.from({ length: 500 }, (_, i) => `<button type="button">b${i}</button>`).join(""),
};

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    if (path === "/csv") {
      posts.push("csv");
      res.writeHead(200, {
        "content-type": "text/csv",
        "content-disposition": 'attachment; filename="rows.csv"',
      });
      return void res.end("a,b\n1,2\n");
    }
    if (path === "/hang") {
      posts.push("hang");
      return; // never answers: whether the sign-in happened is unknown
    }
    const body = pages[path];
    if (!body) return void res.writeHead(404).end();
    res.writeHead(200, { "content-type": "text/html" });
    res.end(`<html><head><title>${path}</title></head><body>${body}</body></html>`);
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  profile = await mkdtemp(join(tmpdir(), "rakazo-page-"));
  // The supervisor's own launch line (stack-argv.ts), headless because no X server runs here:
  // the BRW-2 case below checks what that line makes Chromium listen on.
  port = await freeLoopbackPort();
  const plan = planStack(
    { runDir: profile, displayBase: 0, debugPortBase: port },
    { index: 0, generation: 1 },
    join(profile, "profile"),
  );
  const [binary, ...args] = chromiumArgv(plan, { freshProfile: true, binary: CHROMIUM });
  chromium = spawn(binary as string, ["--headless", ...args], { stdio: ["ignore", "ignore", "pipe"] });
  let err = "";
  chromium.stderr?.on("data", (chunk: Buffer) => {
    err = (err + chunk.toString()).slice(-4_000);
  });
  const deadline = Date.now() + 25_000;
  while (
    !(await fetch(`http://127.0.0.1:${port}/json/version`).then(
      (r) => r.ok,
      () => false,
    ))
  ) {
    if (chromium.exitCode !== null || Date.now() > deadline) {
      throw new Error(`chromium did not serve DevTools on the plan's port ${port}: ${err}`);
    }
    await new Promise((done) => setTimeout(done, 100));
  }
}, 30_000);

afterAll(async () => {
  if (chromium && chromium.exitCode === null) {
    const exited = new Promise((done) => chromium.once("exit", done));
    chromium.kill("SIGKILL");
    await exited;
  }
  server?.closeAllConnections();
  server?.close();
  // Chromium's helper processes may still be finishing writes into the profile for a moment.
  if (profile) await rm(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
});

/** IPv4 127.0.0.0/8 or IPv6 ::1, in network byte order. */
const LOOPBACK = /^(7F[0-9A-F]{6}|0{30}01)$/;

async function freeLoopbackPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((done) => probe.listen(0, "127.0.0.1", done));
  const { port: free } = probe.address() as AddressInfo;
  await new Promise((done) => probe.close(done));
  return free;
}

const methods = () => createPageMethods({ debuggingPortFor: () => port, navigationTimeoutMs: 1_500 });

// Runs before the BRW-5 test, which leaves the tab on a POST that never answers.
describe.skipIf(!existsSync(CHROMIUM))("page downloads on real Chromium", () => {
  it("a click that downloads lands in the downloads folder and is reported like the emulator's", async () => {
    const workspace = await mkdtemp(join(tmpdir(), "rakazo-dl-"));
    try {
      const dir = join(workspace, "downloads");
      const page = createPageMethods({
        debuggingPortFor: () => port,
        navigationTimeoutMs: 5_000,
        downloads: { dir, workspacePath: "downloads" },
      });
      await page["page.navigate"]({ botId: "b", url: `${base}/export` });
      const exportRef = async () =>
        (
          (await page["page.snapshot"]({ botId: "b" })).elements.find((e) => e.name === "Export CSV") as {
            ref: string;
          }
        ).ref;
      posts.length = 0;
      const first = await page["page.act"]({
        botId: "b",
        actions: [{ type: "click", ref: await exportRef() }],
      });
      expect(first.error).toBeUndefined();
      expect(first.url).toBe(`${base}/export`);
      expect(first.downloads).toEqual([{ path: "downloads/rows.csv", size: 8 }]);
      expect(await readFile(join(dir, "rows.csv"), "utf8")).toBe("a,b\n1,2\n");
      // A second download never overwrites the first.
      const second = await page["page.act"]({
        botId: "b",
        actions: [{ type: "click", ref: await exportRef() }],
      });
      expect(second.downloads).toEqual([{ path: "downloads/rows (1).csv", size: 8 }]);
      expect(posts).toEqual(["csv", "csv"]);
      expect((await readdir(join(dir, ".incoming"))).length).toBe(0);
      // Without a download nothing is reported.
      const none = await page["page.act"]({ botId: "b", actions: [{ type: "scroll", dy: 10 }] });
      expect(none.downloads).toEqual([]);
    } finally {
      await rm(workspace, { recursive: true, force: true });
    }
  });

  it("names downloads safely", () => {
    expect(safeDownloadName("../../etc/passwd")).toBe("passwd");
    expect(safeDownloadName(".bashrc")).toBe("bashrc");
    expect(safeDownloadName("a\u0000b\nc.csv")).toBe("abc.csv");
    expect(safeDownloadName("")).toBe("download");
  });
});

describe.skipIf(!existsSync(CHROMIUM))("page methods on real Chromium", () => {
  it("binds the debugging port to loopback only (BRW-2)", async () => {
    // Every TCP listener of the Chromium started from the supervisor's argv, read from /proc.
    const listeners = await listeningSocketsOf(chromium.pid as number);
    expect(listeners.map((l) => l.port)).toContain(port);
    for (const listener of listeners) expect(listener.address, `port ${listener.port}`).toMatch(LOOPBACK);
  });

  it("never shows a password field's value (BRW-3)", async () => {
    const page = methods();
    await page["page.navigate"]({ botId: "b", url: `${base}/login` });
    const snap = await page["page.snapshot"]({ botId: "b" });
    const password = snap.elements.find((e) => e.name === "Password");
    expect(password?.value).toBe("••••");
    expect(snap.elements.find((e) => e.name === "User")?.value).toBe("ada");
    await page["page.act"]({
      botId: "b",
      actions: [{ type: "fill", ref: password?.ref, text: "typed-secret" }],
    });
    const after = await page["page.snapshot"]({ botId: "b" });
    expect(JSON.stringify([snap, after])).not.toMatch(/s3cret-pw|typed-secret/);
  });

  it("rejects a ref taken before a navigation, even on identical markup (BRW-3)", async () => {
    const page = methods();
    await page["page.navigate"]({ botId: "b", url: `${base}/login` });
    const before = await page["page.snapshot"]({ botId: "b" });
    const link = before.elements.find((e) => e.role === "link") as { ref: string };
    await page["page.navigate"]({ botId: "b", url: `${base}/login` });
    await page["page.snapshot"]({ botId: "b" });
    const result = await page["page.act"]({ botId: "b", actions: [{ type: "click", ref: link.ref }] });
    expect(result.completed).toBe(0);
    expect(result.error).toMatchObject({ code: "STALE_REF", index: 0, uncertain: false });
    expect(result.url).toBe(`${base}/login`);
  });

  it("rejects a ref whose element was replaced, instead of retargeting the look-alike", async () => {
    const page = methods();
    await page["page.navigate"]({ botId: "b", url: `${base}/login` });
    const snap = await page["page.snapshot"]({ botId: "b" });
    const swap = snap.elements.find((e) => e.name === "Swap") as { ref: string };
    const first = await page["page.act"]({ botId: "b", actions: [{ type: "click", ref: swap.ref }] });
    expect(first.error).toBeUndefined();
    const second = await page["page.act"]({ botId: "b", actions: [{ type: "click", ref: swap.ref }] });
    expect(second.error).toMatchObject({ code: "STALE_REF", uncertain: false });
  });

  it("lists at most 80 of 500 buttons (BRW-4)", async () => {
    const page = methods();
    await page["page.navigate"]({ botId: "b", url: `${base}/many` });
    const snap = await page["page.snapshot"]({ botId: "b" });
    expect(snap.elements).toHaveLength(MAX_ELEMENTS);
    expect(snap.omittedElements).toBe(420);
  });

  it("an interrupted batch reports the completed prefix and an uncertain outcome, and replays nothing (BRW-5)", async () => {
    const page = methods();
    await page["page.navigate"]({ botId: "b", url: `${base}/login` });
    const snap = await page["page.snapshot"]({ botId: "b" });
    const ref = (name: string) => (snap.elements.find((e) => e.name === name) as { ref: string }).ref;
    posts.length = 0;
    const result = await page["page.act"]({
      botId: "b",
      actions: [
        { type: "fill", ref: ref("User"), text: "grace" },
        { type: "click", ref: ref("Sign in") },
        { type: "click", ref: ref("Other") },
      ],
    });
    expect(result.completed).toBe(1);
    expect(result.error).toMatchObject({ code: "TIMEOUT", index: 1, uncertain: true });
    expect(posts).toEqual(["hang"]);
  });
});
