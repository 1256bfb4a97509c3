/**
 * The Shell tab draws every glyph of its cells, in real Chromium with the fonts it ships with
 * (fake provider, its real shell): a row of underscores, which sit at the very bottom of a
 * cell, leaves ink on screen. With xterm.js's default line height (1.0) the DOM renderer's rows
 * are exactly a glyph tall and clip the underscore away, so the row reads "____" in the buffer
 * yet shows nothing. The row's pixels are read from a screenshot (saved under
 * apps/web/test-output/shell/).
 *
 * Skipped locally (fails under CI=true) without Chromium (scripts/test-tools.sh).
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createFakeProvider } from "@rakazo/sandbox";
import { missingOrFail } from "@rakazo/sandbox/testing";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AppSystem, startAppSystem } from "./testing/app-system.ts";
import { firstRunSetup } from "./testing/first-run.ts";
import { CHROMIUM } from "./testing/screen-system.ts";

const SUITE = "the Shell tab shows underscores";
const missing = missingOrFail(SUITE, [CHROMIUM.executablePath]);
const OUTPUT = fileURLToPath(new URL("../test-output/shell/", import.meta.url));
const UNDERSCORES = "_".repeat(40);

/** How many pixels of a PNG differ clearly from its top-left pixel (the background). */
function inkIn(page: Page, png: Buffer): Promise<number> {
  return page.evaluate(async (base64) => {
    const g = globalThis as any;
    const bytes = Uint8Array.from(g.atob(base64), (c: string) => c.charCodeAt(0));
    const bitmap = await g.createImageBitmap(new g.Blob([bytes], { type: "image/png" }));
    const canvas = new g.OffscreenCanvas(bitmap.width, bitmap.height);
    const context = canvas.getContext("2d");
    context.drawImage(bitmap, 0, 0);
    const { data } = context.getImageData(0, 0, bitmap.width, bitmap.height);
    let ink = 0;
    for (let i = 0; i < data.length; i += 4) {
      const d =
        Math.abs(data[i] - data[0]) + Math.abs(data[i + 1] - data[1]) + Math.abs(data[i + 2] - data[2]);
      if (d > 96) ink++;
    }
    return ink;
  }, png.toString("base64"));
}

describe.skipIf(missing.length > 0)(
  missing.length > 0 ? `${SUITE} — skipped, missing: ${missing.join(", ")}` : SUITE,
  () => {
    let system: AppSystem;
    let browser: Browser;
    let page: Page;
    let computerId = "";

    beforeAll(async () => {
      system = await startAppSystem({ provider: async (rootDir) => createFakeProvider({ rootDir }) });
      browser = await chromium.launch(CHROMIUM);
      page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
      page.on("pageerror", (error) => console.error(`page error: ${error.message}`));
      const client = system.client(await firstRunSetup(page, system.web.url));
      const spaceId = (await client.call("space/list", {}))[0]?.id ?? "";
      computerId = (await client.call("computer/list", { spaceId }))[0]?.id ?? "";
      await client.call("computer/start", { computerId });
      const deadline = Date.now() + 30_000;
      while ((await client.call("computer/get", { computerId })).state !== "running") {
        if (Date.now() > deadline) throw new Error("the Team Computer never ran");
        await new Promise((done) => setTimeout(done, 200));
      }
    }, 90_000);

    afterAll(async () => {
      await browser?.close();
      await system?.close();
    });

    it("a row of underscores printed by the shell leaves ink in its row", async () => {
      await page.goto(`${system.web.url}/#/computers/${computerId}`);
      await page.getByRole("tab", { name: "Open shell", exact: true }).click();
      await page.getByRole("button", { name: "Take control and open the shell", exact: true }).click();
      const rows = page.locator(".xterm-rows");
      await expect.poll(() => rows.textContent(), { timeout: 15_000 }).toContain("rakazo:~");
      await page.locator(".xterm-host").click();
      await page.keyboard.type(`echo ${UNDERSCORES}`, { delay: 5 });
      await page.keyboard.press("Enter");
      const row = rows.locator(":scope > div").filter({ hasText: new RegExp(`^${UNDERSCORES}\\s*$`) });
      await expect.poll(() => row.count(), { timeout: 10_000 }).toBe(1);
      expect((await row.textContent())?.trim()).toBe(UNDERSCORES);
      await page.locator(".xterm-host").screenshot({ path: path.join(OUTPUT, "underscores.png") });
      const ink = await inkIn(page, await row.screenshot());
      console.log(`[shell] ink pixels in a row of 40 underscores: ${ink}`);
      // 40 underscores a pixel tall each cover at least 40 × 6 pixels; a clipped row has none.
      expect(ink).toBeGreaterThan(200);
    }, 60_000);
  },
);
