/**
 * Files, the shell and Activity where a person looks for them, in real Chromium against the real
 * API, worker and Postgres (fake provider, a Team Computer), at 1280×800 and 390×844: "Open shell"
 * asks before it takes control of the bot's screen; Files hides dot-entries until "Show hidden
 * files", refuses an upload at the workspace's top level before sending, and uploads into
 * `shared/` while it is on screen (and stays there); Activity lists the newest first, grouped by
 * who acted in plain (and German) words with the locale's times, marks a failure in words, shows
 * stderr apart and leaves out page views; the favicon answers 200. Each
 * state has a screenshot under apps/web/test-output/files-activity/ and axe-core finds no
 * serious or critical violation.
 *
 * Skipped locally (fails under CI=true) without Chromium (scripts/test-tools.sh).
 */
import { mkdirSync } from "node:fs";
import { readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { AxeBuilder } from "@axe-core/playwright";
import { createFakeProvider } from "@rakazo/sandbox";
import { missingOrFail } from "@rakazo/sandbox/testing";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AppSystem, startAppSystem } from "./testing/app-system.ts";
import { firstRunSetup, VIEWPORTS } from "./testing/first-run.ts";
import { CHROMIUM } from "./testing/screen-system.ts";

const SUITE = "Files, the shell confirmation and Activity in the computer view";
const missing = missingOrFail(SUITE, [CHROMIUM.executablePath]);
const OUTPUT = fileURLToPath(new URL("../test-output/files-activity/", import.meta.url));

describe.skipIf(missing.length > 0)(
  missing.length > 0 ? `${SUITE} — skipped, missing: ${missing.join(", ")}` : SUITE,
  () => {
    let system: AppSystem;
    let browser: Browser;
    let setupPage: Page;
    let token = "";
    let computerId = "";
    let botId = "";
    let rootDir = "";

    beforeAll(async () => {
      mkdirSync(OUTPUT, { recursive: true });
      system = await startAppSystem({
        provider: async (dir) => {
          rootDir = dir;
          return createFakeProvider({ rootDir: dir });
        },
      });
      browser = await chromium.launch(CHROMIUM);
      setupPage = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
      token = await firstRunSetup(setupPage, system.web.url);
      const client = system.client(token);
      const spaceId = (await client.call("space/list", {}))[0]?.id ?? "";
      const computer = (await client.call("computer/list", { spaceId }))[0];
      computerId = computer?.id ?? "";
      expect(computer?.mode).toBe("team");
      botId = (await client.call("bot/list", { spaceId }))[0]?.id ?? "";
      await client.call("computer/start", { computerId });
      const deadline = Date.now() + 30_000;
      while ((await client.call("computer/get", { computerId })).state !== "running") {
        if (Date.now() > deadline) throw new Error("the Team Computer never ran");
        await new Promise((done) => setTimeout(done, 200));
      }
      // What a bot's computer holds at its top level: shared/ and dot-entries a person rarely wants.
      await client.call("computer/exec", {
        computerId,
        argv: ["mkdir", "-p", "shared", ".browser-profiles"],
      });
      const machine = (await readdir(rootDir, { withFileTypes: true })).find((e) => e.isDirectory());
      await writeFile(path.join(rootDir, machine?.name ?? "", "workspace", ".bash_history"), "ls\n");
    }, 90_000);

    afterAll(async () => {
      await browser?.close();
      await system?.close();
    });

    describe.each(VIEWPORTS)("at $name ($width×$height)", (viewport) => {
      let page: Page;
      const shot = (name: string) =>
        page.screenshot({ path: path.join(OUTPUT, `${viewport.name}-${name}.png`) });
      const axe = async () => {
        const result = await new AxeBuilder({ page }).analyze();
        const bad = result.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
        expect(bad.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`)).toEqual([]);
      };
      const controlState = () => page.getByTestId("control-state").textContent();

      beforeAll(async () => {
        const context = await browser.newContext({
          viewport: { width: viewport.width, height: viewport.height },
          storageState: await setupPage.context().storageState(),
        });
        page = await context.newPage();
        page.on("pageerror", (error) => console.error(`[${viewport.name}] page error: ${error.message}`));
        await page.goto(`${system.web.url}/#/computers/${computerId}`);
        await page.getByRole("tab", { name: "Open shell", exact: true }).waitFor({ timeout: 15_000 });
      });
      afterAll(() => page?.context().close());

      it("the favicon the page links answers 200 with an SVG, and so does /favicon.ico", async () => {
        const href = await page.locator('link[rel="icon"]').getAttribute("href");
        expect(href).toBe("/favicon.svg");
        for (const url of [href ?? "", "/favicon.ico"]) {
          const response = await page.request.get(new URL(url, system.web.url).href);
          expect([url, response.status(), response.headers()["content-type"]]).toEqual([
            url,
            200,
            "image/svg+xml",
          ]);
          expect(await response.text()).toContain("<svg");
        }
      });

      it('"Open shell" asks before taking control of the bot\'s screen; Cancel keeps watching', async () => {
        await page.getByRole("tab", { name: "Open shell", exact: true }).click();
        const dialog = page.getByRole("dialog", { name: "Take control to open a shell?" });
        await dialog.waitFor({ timeout: 5_000 });
        expect(await dialog.textContent()).toContain(
          "its own commands are refused until you release control",
        );
        await shot("shell-confirm");
        await axe();
        await dialog.getByRole("button", { name: "Cancel", exact: true }).click();
        await dialog.waitFor({ state: "detached" });
        expect(await controlState()).toBe("Watching (view only).");
        await page.getByRole("tab", { name: "Open shell", exact: true }).click();
        await dialog.getByRole("button", { name: "Take control and open the shell", exact: true }).click();
        await expect.poll(controlState, { timeout: 10_000 }).toBe("You control this screen.");
        expect(
          await page.getByRole("tab", { name: "Shell", exact: true }).getAttribute("aria-selected"),
        ).toBe("true");
      }, 60_000);

      it("Files hides dot-entries until asked, refuses the top level before sending, and uploads into shared/ while it is shown", async () => {
        await page.getByRole("tab", { name: "Files", exact: true }).click();
        const files = page.getByTestId("files");
        const entry = (name: string) => files.getByRole("button", { name, exact: true });
        await entry("shared/").waitFor({ timeout: 10_000 });
        expect(await entry(".browser-profiles/").count()).toBe(0);
        expect(await entry(".bash_history").count()).toBe(0);
        expect(await files.getByTestId("files-hidden-count").textContent()).toContain("2 hidden");
        // Icons are SVG, the controls named in words (no glyph the fonts may lack).
        const refresh = files.getByRole("button", { name: "Refresh", exact: true });
        expect(await refresh.getAttribute("title")).toBe("Refresh");
        expect(await refresh.locator("svg").count()).toBe(1);
        expect(await files.textContent()).not.toContain("\u2B73");

        await files.getByLabel("Show hidden files").check();
        await entry(".browser-profiles/").waitFor();
        await entry(".bash_history").waitFor();
        const download = files.getByRole("button", { name: "Download .bash_history", exact: true });
        expect(await download.getAttribute("title")).toBe("Download .bash_history");
        expect(await download.locator("svg").count()).toBe(1);
        // The top level of a Team Computer is no place for a person's upload: said before sending.
        expect(await files.getByTestId("files-not-writable").textContent()).toContain(
          "Files cannot be uploaded into /",
        );
        expect(await files.locator('input[type="file"]').isDisabled()).toBe(true);
        await shot("files-hidden-shown");
        await axe();
        await files.getByLabel("Show hidden files").uncheck();
        await entry(".bash_history").waitFor({ state: "detached" });

        // From there, the folders a person may upload into are one click away.
        await files.getByRole("button", { name: "Open the bot's folder", exact: true }).click();
        await expect.poll(() => files.getByTestId("files-path").textContent()).toBe(`/bots/${botId}`);
        expect(await files.locator('input[type="file"]').isDisabled()).toBe(false);
        await files.getByRole("button", { name: "Up", exact: true }).click();
        await expect.poll(() => files.getByTestId("files-path").textContent()).toBe("/bots");
        await files.getByRole("button", { name: "Open shared/", exact: true }).click();
        await expect.poll(() => files.getByTestId("files-path").textContent()).toBe("/shared");
        expect(await files.getByTestId("files-not-writable").count()).toBe(0);
        const name = `from-${viewport.name}.txt`;
        await files.locator('input[type="file"]').setInputFiles({
          name,
          mimeType: "text/plain",
          buffer: Buffer.from(`uploaded into shared/ at ${viewport.name}\n`),
        });
        await files.getByText(`Uploaded ${name}.`).waitFor({ timeout: 10_000 });
        await entry(name).waitFor({ timeout: 10_000 });
        // The view stayed where the person put the file.
        expect(await files.getByTestId("files-path").textContent()).toBe("/shared");
        const listed = await system.client(token).call("computer/files/list", { computerId, path: "shared" });
        expect(listed.entries.map((e) => e.path)).toContain(`shared/${name}`);
        const botFolder = await system
          .client(token)
          .call("computer/files/list", { computerId, path: `bots/${botId}` })
          .catch(() => ({ entries: [] }));
        expect(botFolder.entries.map((e) => e.name)).not.toContain(name);
        await shot("files-uploaded-shared");
        await axe();
        // Nothing overflows the toolbar or the page sideways (the phone's 390 px included).
        const overflow = await files
          .locator(".toolbar")
          .evaluate((bar) => [
            bar.scrollWidth - bar.clientWidth,
            bar.ownerDocument.documentElement.scrollWidth,
          ]);
        expect(overflow[0]).toBeLessThanOrEqual(0);
        expect(overflow[1]).toBeLessThanOrEqual(viewport.width);
        // The message is about shared/: leaving the folder clears it.
        await files.getByRole("button", { name: "Up", exact: true }).click();
        await expect.poll(() => files.getByTestId("files-path").textContent()).toBe("/");
        expect(await files.getByText(`Uploaded ${name}.`).count()).toBe(0);
      }, 60_000);

      it("Activity: newest first, a failure marked in words with stderr apart, page views left out", async () => {
        const client = system.client(token);
        await client.call("computer/exec", { computerId, argv: ["cat", `missing-${viewport.name}.txt`] });
        const marker = `newest-${viewport.name}`;
        await client.call("computer/exec", { computerId, argv: ["echo", marker] });
        const activity = page.getByTestId("activity");
        const items = activity.locator(":scope > li");
        await expect.poll(() => items.first().textContent(), { timeout: 20_000 }).toContain(marker);
        expect(await items.first().textContent()).toContain(`ran echo ${marker} — exit 0`);

        const failed = items.filter({ hasText: `cat missing-${viewport.name}.txt` });
        expect(await failed.count()).toBe(1);
        expect(await failed.getAttribute("data-ok")).toBe("false");
        expect(await failed.locator(".outcome").textContent()).toContain("Failed");
        expect(await failed.textContent()).toContain(`ran cat missing-${viewport.name}.txt — exit 1`);
        expect(await failed.locator("pre.tail.stderr").textContent()).toContain("No such file or directory");
        expect(await failed.textContent()).toContain("Errors (stderr)");
        expect(await activity.textContent()).not.toContain("→ exit");

        // Newest first, throughout; the person's own screen views are not listed as actions.
        const times = await items
          .locator("time")
          .evaluateAll((nodes) => nodes.map((node) => Date.parse(node.getAttribute("datetime") ?? "")));
        expect(times.length).toBeGreaterThan(2);
        expect([...times].sort((a, b) => b - a)).toEqual(times);
        const views = (await client.call("computer/activity", { computerId, limit: 500 })).events.filter(
          (e) =>
            e.payload.tool === "computer/screenUrl" &&
            (e.payload.details as { policy?: string }).policy === "view",
        );
        expect(views.length).toBeGreaterThan(0);
        expect(await activity.textContent()).not.toContain("screen_url view");

        // Grouped by who acted, in plain words: the test's API token is a script, the person's
        // clicks in the app (taking control for the shell) are the person's.
        expect(await items.first().getAttribute("data-actor")).toBe("api");
        expect(await items.first().getByTestId("activity-actor").textContent()).toBe(
          "Through the API (a script or the CLI)",
        );
        const took = items.filter({ hasText: "took control of the screen" }).first();
        expect(await took.getAttribute("data-actor")).toBe("person");
        const personGroup = activity.getByTestId("activity-actor").filter({ hasText: "A person in the app" });
        expect(await personGroup.count()).toBeGreaterThan(0);
        expect(await activity.textContent()).not.toContain("take_control");
        // A group header only where the actor changes.
        const actors = await items.evaluateAll((nodes) => nodes.map((n) => n.getAttribute("data-actor")));
        const headers = await items.evaluateAll((nodes) =>
          nodes.map((n) => n.querySelector('[data-testid="activity-actor"]') !== null),
        );
        expect(headers).toEqual(actors.map((a, i) => i === 0 || actors[i - 1] !== a));

        // German: the lines translated, the times in the German format (Intl, the app's locale).
        await page.getByLabel("Language").selectOption("de");
        const tookDe = items.filter({ hasText: "hat die Kontrolle über den Bildschirm übernommen" }).first();
        await tookDe.waitFor({ timeout: 5_000 });
        expect(await tookDe.getAttribute("data-actor")).toBe("person");
        expect(await items.first().getByTestId("activity-actor").textContent()).toBe(
          "Über die API (ein Skript oder die CLI)",
        );
        const first = items.first().locator("time");
        const shown = (await first.textContent()) ?? "";
        const expected = await first.evaluate((node) =>
          new Intl.DateTimeFormat("de", { timeStyle: "medium" }).format(
            new Date(node.getAttribute("datetime") ?? ""),
          ),
        );
        expect(shown).toBe(expected);
        expect(shown).not.toMatch(/AM|PM/);
        await shot("activity-de");
        await page.getByLabel("Sprache").selectOption("en");
        await took.waitFor({ timeout: 5_000 });
        await failed.scrollIntoViewIfNeeded();
        await shot("activity");
        await axe();
        await page.getByRole("button", { name: "Release control", exact: true }).click();
        await expect.poll(controlState).toBe("Watching (view only).");
      }, 60_000);
    });
  },
);
