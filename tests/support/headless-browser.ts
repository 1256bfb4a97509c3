/**
 * The test runtime's `BROWSER_PROVIDER=emulator` (BRW-7): a local headless Chromium per
 * computer and bot, started on first use and driven by the supervisor's own page methods over
 * CDP on a loopback port — the same code as a computer's browser, but never a computer's live,
 * logged-in one. Downloads land in a private folder first and are then written into the
 * computer's workspace through its files API, so they appear where the page tools say.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createPageMethods } from "@rakazo/page-helper";
import type { PageActResult, PageBrowser } from "@rakazo/sandbox";
import { createSupervisedPageBrowser, inProcessTransport } from "@rakazo/sandbox";
import type { HeadlessPageBrowsers } from "@rakazo/services";

/** Chromium for tests: the system binary, never a download (the machines here are offline). */
export const HEADLESS_CHROMIUM = "/usr/bin/chromium";

interface Instance {
  readonly process: ChildProcess;
  readonly port: number;
  readonly dir: string;
}

async function startChromium(dir: string): Promise<Instance> {
  const child = spawn(
    HEADLESS_CHROMIUM,
    [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
      "--remote-debugging-address=127.0.0.1",
      "--remote-debugging-port=0",
      `--user-data-dir=${join(dir, "profile")}`,
      "about:blank",
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  const port = await new Promise<number>((resolve, reject) => {
    let err = "";
    const timer = setTimeout(() => reject(new Error(`chromium did not start: ${err}`)), 20_000);
    child.stderr?.on("data", (chunk: Buffer) => {
      err += chunk.toString();
      const match = /DevTools listening on ws:\/\/127\.0\.0\.1:(\d+)\//.exec(err);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
    child.on("exit", () => reject(new Error(`chromium exited: ${err}`)));
    child.on("error", reject);
  });
  return { process: child, port, dir };
}

export interface HeadlessBrowserRuntime {
  readonly browsers: HeadlessPageBrowsers;
  /** How many Chromium processes were started (one per computer and bot). */
  started(): number;
  close(): Promise<void>;
}

export function startHeadlessBrowsers(
  options: { navigationTimeoutMs?: number } = {},
): HeadlessBrowserRuntime {
  const instances = new Map<string, Promise<Instance>>();

  const instanceFor = (key: string): Promise<Instance> => {
    let instance = instances.get(key);
    if (!instance) {
      instance = mkdtemp(join(tmpdir(), "rakazo-headless-")).then(startChromium);
      instances.set(key, instance);
    }
    return instance;
  };

  const browserFor = (
    computerRef: string,
    save: (name: string, data: Uint8Array) => Promise<string>,
  ): PageBrowser => {
    const keyOf = (botId: string) => JSON.stringify([computerRef, botId]);
    const methodsFor = async (botId: string) => {
      const { port, dir } = await instanceFor(keyOf(botId));
      return createPageMethods({
        debuggingPortFor: () => port,
        ...(options.navigationTimeoutMs ? { navigationTimeoutMs: options.navigationTimeoutMs } : {}),
        downloads: { dir: join(dir, "downloads"), workspacePath: "downloads" },
      });
    };
    const page = createSupervisedPageBrowser(
      inProcessTransport(async (method, params) => {
        const botId = (params as { botId: string }).botId;
        const methods = await methodsFor(botId);
        return methods[method as keyof typeof methods](params as Record<string, unknown>);
      }),
    );
    return {
      navigate: (botId, url) => page.navigate(botId, url),
      snapshot: (botId) => page.snapshot(botId),
      async act(botId, actions): Promise<PageActResult> {
        const result = await page.act(botId, actions);
        if (result.downloads.length === 0) return result;
        // Move each download from the browser's private folder into the computer's workspace.
        const { dir } = await instanceFor(keyOf(botId));
        const downloads = [];
        for (const download of result.downloads) {
          const name = download.path.slice("downloads/".length);
          const local = join(dir, "downloads", name);
          const path = await save(name, new Uint8Array(await readFile(local)));
          await rm(local, { force: true });
          downloads.push({ path, size: download.size });
        }
        return { ...result, downloads };
      },
    };
  };

  return {
    browsers: { browserFor },
    started: () => instances.size,
    async close() {
      for (const pending of instances.values()) {
        const instance = await pending.catch(() => undefined);
        if (!instance) continue;
        if (instance.process.exitCode === null) {
          const exited = new Promise((done) => instance.process.once("exit", done));
          instance.process.kill("SIGKILL");
          await exited;
        }
        await rm(instance.dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
      }
      instances.clear();
    },
  };
}
