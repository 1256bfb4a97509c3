/**
 * `pnpm bench --only web-app`: what the web app costs.
 * - JS shipped for the app (gzip -9 of the production build's scripts; noVNC is the screen page's
 *   own bundle, not the app's, so it is excluded), target ≤ 300 KB.
 * - Time to first screen pixel on a real Docker computer: navigation → `connected` for the
 *   computer view (session, screenUrl, prefetch, sandboxed frame, noVNC) beside the bare noVNC
 *   page of a freshly minted capability (navigation → `screen-connected`), same run, medians;
 *   beside it, where each one's time goes (each request's median start and end after
 *   navigation, printed, not a row), so a change to the chain can be seen in its own step.
 * The timing rows need Docker, the computer image and Chromium; without them they are left out.
 */
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { createProvider } from "@rakazo/sandbox";
import { COMPUTER_IMAGE, dockerUnavailable } from "@rakazo/sandbox/testing";
import { APP_DIST } from "@rakazo/web/static";
import { startAppSystem } from "@rakazo/web/testing/app-system";
import { buildWebAppIfStale } from "@rakazo/web/testing/build-app";
import { CHROMIUM } from "@rakazo/web/testing/screen-system";
import { chromium } from "playwright-core";
import type { BenchReport } from "./row.ts";

const ROUNDS = 5;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

export async function benchWebApp(report: BenchReport): Promise<void> {
  await buildWebAppIfStale();
  const dir = path.join(APP_DIST, "app");
  let gzipped = 0;
  for (const name of await readdir(dir)) {
    if (name.endsWith(".js")) gzipped += gzipSync(await readFile(path.join(dir, name)), { level: 9 }).length;
  }
  report({
    name: "web app JS shipped (gzip, noVNC excluded)",
    value: gzipped / 1024,
    unit: "KiB",
    target: "≤ 300 KB",
  });

  const unavailable = await dockerUnavailable();
  if (unavailable) {
    process.stdout.write(`(time to first screen pixel left out: ${unavailable})\n`);
    return;
  }
  const system = await startAppSystem({
    provider: (dataDir) => createProvider({ kind: "docker", image: COMPUTER_IMAGE, dataDir }),
  });
  const browser = await chromium.launch(CHROMIUM);
  let computerId = "";
  let token = "";
  try {
    const setup = await fetch(`${system.web.url}/auth/bootstrap`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-rakazo-app": "1" },
      body: "{}",
    });
    token = ((await setup.json()) as { result: { token: string } }).result.token;
    const cookie = setup.headers.getSetCookie()[0]?.split(";")[0] ?? "";
    const client = system.client(token);
    const [space] = await client.call("space/list", {});
    const spaceId = space?.id ?? "";
    computerId = (await client.call("computer/list", { spaceId }))[0]?.id ?? "";
    const botId = (await client.call("bot/list", { spaceId }))[0]?.id ?? "";
    await client.call("computer/start", { computerId });
    for (let i = 0; i < 300; i++) {
      if ((await client.call("computer/get", { computerId })).state === "running") break;
      await new Promise((r) => setTimeout(r, 1000));
    }
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const [cookieName = "", cookieValue = ""] = cookie.split("=");
    await context.addCookies([
      { name: cookieName, value: cookieValue, url: system.web.url, httpOnly: true, sameSite: "Strict" },
    ]);
    const page = await context.newPage();
    // Warm-up: the first screen starts the bot's desktop.
    await page.goto(`${system.web.url}/#/computers/${computerId}`);
    await page.waitForSelector('[data-screen-status="connected"]', { timeout: 90_000 });

    // Where the time goes: per round, each label's first request start and end, in ms after
    // navigation (a label is a path, with capabilities and asset names folded).
    type Timeline = Map<string, { start: number[]; end: number[] }>;
    const timelines: Record<"app" | "bare", Timeline> = { app: new Map(), bare: new Map() };
    let round: Map<string, { start?: number; end?: number }> | undefined;
    let navigated = 0;
    const at = (label: string, what: "start" | "end") => {
      const mark = round?.get(label) ?? {};
      if (!round || mark[what] !== undefined || (what === "end" && mark.start === undefined)) return;
      mark[what] = performance.now() - navigated;
      round.set(label, mark);
    };
    const labelOf = (url: string) => {
      const { pathname } = new URL(url);
      if (/^\/(screens|embed)\//.test(pathname))
        return pathname.replace(/^\/(screens|embed)\/[^/]+\//, "/$1/<cap>/");
      return pathname.startsWith("/assets/") ? "/assets/*" : pathname;
    };
    page.on("request", (r) => at(labelOf(r.url()), "start"));
    page.on("requestfinished", (r) => at(labelOf(r.url()), "end"));
    page.on("websocket", (ws) => {
      at("websocket (→ first frame)", "start");
      ws.once("framereceived", () => at("websocket (→ first frame)", "end"));
    });
    /** Navigation → `selector`, in ms, its requests added to `timeline`. */
    const timed = async (timeline: Timeline, url: string, selector: string): Promise<number> => {
      await page.goto("about:blank");
      navigated = performance.now();
      round = new Map();
      await page.goto(url);
      await page.waitForSelector(selector, { timeout: 60_000 });
      const took = performance.now() - navigated;
      at("connected", "start");
      for (const [label, mark] of round) {
        const entry = timeline.get(label) ?? { start: [], end: [] };
        if (mark.start !== undefined) entry.start.push(mark.start);
        if (mark.end !== undefined) entry.end.push(mark.end);
        timeline.set(label, entry);
      }
      round = undefined;
      return took;
    };

    const app: number[] = [];
    const bare: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const view = `${system.web.url}/#/computers/${computerId}`;
      app.push(await timed(timelines.app, view, '[data-screen-status="connected"]'));
      const { url } = await client.call("computer/screenUrl", { computerId, botId, policy: "view" });
      bare.push(await timed(timelines.bare, url, "html.screen-connected"));
    }
    for (const [kind, timeline] of Object.entries(timelines)) {
      process.stdout.write(
        `${kind === "app" ? "computer view" : "bare page"}, median ms after navigation:\n`,
      );
      const rows = [...timeline]
        .filter(([, t]) => t.start.length >= Math.ceil(ROUNDS / 2))
        .map(([label, t]) => ({ label, start: median(t.start), end: median(t.end) }))
        .sort((a, b) => a.start - b.start);
      for (const { label, start, end } of rows) {
        const ended = Number.isNaN(end) ? "" : ` → ${end.toFixed(0).padStart(5)}`;
        process.stdout.write(`  ${start.toFixed(0).padStart(5)}${ended}  ${label}\n`);
      }
    }
    const value = median(app);
    const baseline = median(bare);
    report({
      name: "computer view: navigation → connected (median)",
      value,
      unit: "ms",
      baseline,
      ratio: value / baseline,
      target: "beside the bare noVNC page",
    });
    await context.close();
  } finally {
    await browser.close();
    if (computerId && token) {
      const client = system.client(token);
      await client.call("computer/delete", { computerId }).catch(() => undefined);
      for (let i = 0; i < 90; i++) {
        const c = await client.call("computer/get", { computerId }).catch(() => undefined);
        if (!c || c.state === "deleted") break;
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
    await system.close();
  }
}
