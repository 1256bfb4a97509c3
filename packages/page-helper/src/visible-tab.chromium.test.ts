// CMP-6 / BRW-1: with several tabs (a restored session brings back all of them) the page methods
// drive the visible one, even when a background tab is listed first by the DevTools endpoint.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { browserTargetUrl, CdpConnection, pageTargetUrl } from "./cdp.ts";

const CHROMIUM = "/usr/bin/chromium";
// Under CI a missing browser fails the suite instead of skipping it.
const RUN = existsSync(CHROMIUM) || process.env.CI === "true";
let chromium: ChildProcess;
let profile: string;
let port: number;

beforeAll(async () => {
  if (!RUN) return;
  profile = await mkdtemp(join(tmpdir(), "rakazo-tabs-"));
  chromium = spawn(
    CHROMIUM,
    [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--no-first-run",
      "--remote-debugging-address=127.0.0.1",
      "--remote-debugging-port=0",
      `--user-data-dir=${profile}`,
      "about:blank",
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  port = await new Promise<number>((resolve, reject) => {
    let err = "";
    chromium.stderr?.on("data", (chunk: Buffer) => {
      err += chunk.toString();
      const match = /DevTools listening on ws:\/\/127\.0\.0\.1:(\d+)\//.exec(err);
      if (match) resolve(Number(match[1]));
    });
    chromium.on("exit", () => reject(new Error(`chromium exited: ${err}`)));
  });
}, 30_000);

afterAll(async () => {
  if (chromium && chromium.exitCode === null) {
    const exited = new Promise((done) => chromium.once("exit", done));
    chromium.kill("SIGKILL");
    await exited;
  }
  if (profile) await rm(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
});

const titleOf = async (targetUrl: string): Promise<string> => {
  const cdp = await CdpConnection.open(targetUrl);
  try {
    const { result } = await cdp.send<{ result: { value: string } }>("Runtime.evaluate", {
      expression: "document.title",
      returnByValue: true,
    });
    return result.value;
  } finally {
    cdp.close();
  }
};

describe.skipIf(!RUN)("the visible tab among several", () => {
  it("is the one page methods get, not the first listed", async () => {
    const browser = await CdpConnection.open(await browserTargetUrl(port));
    try {
      await browser.send("Target.createTarget", { url: "data:text/html,<title>shown</title>" });
      await browser.send("Target.createTarget", {
        url: "data:text/html,<title>behind</title>",
        background: true,
      });
    } finally {
      browser.close();
    }
    // The background tab is newer, so the endpoint lists it before the visible one.
    let titles: string[] = [];
    for (let attempt = 0; attempt < 50 && !titles.includes("behind"); attempt += 1) {
      const listed = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as {
        type: string;
        title: string;
      }[];
      titles = listed.filter((t) => t.type === "page").map((t) => t.title);
      await new Promise((done) => setTimeout(done, 100));
    }
    expect(titles[0]).toBe("behind");
    expect(await titleOf(await pageTargetUrl(port))).toBe("shown");
  });
});
