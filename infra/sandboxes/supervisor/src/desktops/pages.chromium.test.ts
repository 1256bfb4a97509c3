// BRW-2..5 against real headless Chromium: a page served on loopback, CDP on a loopback port.
// The shared PageBrowser contract runs here too (the same suite the page emulator runs).
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import http from "node:http";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createPageMethods, safeDownloadName } from "@rakazo/page-helper";
import { createSupervisedPageBrowser, inProcessTransport } from "@rakazo/sandbox";
import { requireTools, runPageBrowserContract } from "@rakazo/sandbox/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listeningSocketsOf } from "../testing/listening-sockets.ts";
import { chromiumArgv, planStack } from "./stack-argv.ts";

const CHROMIUM = "/usr/bin/chromium";
let base: string;
let server: http.Server;
let chromium: ChildProcess;
let profile: string;
let port: number;
const posts: string[] = [];

const pages: Record<string, string> = {
  "/swap": `<button id="swap" type="button" onclick="this.replaceWith(Object.assign(document.createElement('button'),{id:'swap',textContent:'Swap'}))">Swap</button>`,
  "/export": `<form method="post" action="/csv"><button>Export CSV</button></form>`,
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
const downloads = requireTools("page downloads on real Chromium", [CHROMIUM]);
describe.skipIf(downloads.skip)(downloads.title, () => {
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
    // A real Chromium start: far above the unit project's 5 s default on a busy host.
  }, 60_000);

  it("names downloads safely", () => {
    expect(safeDownloadName("../../etc/passwd")).toBe("passwd");
    expect(safeDownloadName(".bashrc")).toBe("bashrc");
    expect(safeDownloadName("a\u0000b\nc.csv")).toBe("abc.csv");
    expect(safeDownloadName("")).toBe("download");
  });
});

const methodsGate = requireTools("page methods on real Chromium", [CHROMIUM]);
describe.skipIf(methodsGate.skip)(methodsGate.title, () => {
  it("binds the debugging port to loopback only (BRW-2)", async () => {
    // Every TCP listener of the Chromium started from the supervisor's argv, read from /proc.
    const listeners = await listeningSocketsOf(chromium.pid as number);
    expect(listeners.map((l) => l.port)).toContain(port);
    for (const listener of listeners) expect(listener.address, `port ${listener.port}`).toMatch(LOOPBACK);
  });

  // Needs the page's own script, so it is not in the shared contract (the emulator runs none).
  it("rejects a ref whose element was replaced, instead of retargeting the look-alike", async () => {
    const page = methods();
    await page["page.navigate"]({ botId: "b", url: `${base}/swap` });
    const snap = await page["page.snapshot"]({ botId: "b" });
    const swap = snap.elements.find((e) => e.name === "Swap") as { ref: string };
    const first = await page["page.act"]({ botId: "b", actions: [{ type: "click", ref: swap.ref }] });
    expect(first.error).toBeUndefined();
    const second = await page["page.act"]({ botId: "b", actions: [{ type: "click", ref: swap.ref }] });
    expect(second.error).toMatchObject({ code: "STALE_REF", uncertain: false });
  });
});

// Last: its final test leaves the tab on a load that never finishes.
if (!methodsGate.skip) {
  runPageBrowserContract({
    name: "supervisor page methods on headless Chromium",
    create: ({ navigationTimeoutMs }) => {
      const page = createPageMethods({ debuggingPortFor: () => port, navigationTimeoutMs });
      return createSupervisedPageBrowser(
        inProcessTransport((method, params) =>
          page[method as keyof typeof page](params as Record<string, unknown>),
        ),
      );
    },
    timeoutMs: 30_000,
  });
}
