/**
 * First-run setup is offered only on a new installation, in real Chromium against the real API
 * and Postgres: the sign-in page offers it before anyone set up and never after; a setup form
 * left open while someone else finished setup answers a plain translated sentence (English and
 * German), never an error code; `/auth/setup` tells a stranger that one boolean and nothing else.
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

const SUITE = "first-run setup offered once";
const missing = missingOrFail(SUITE, [CHROMIUM.executablePath]);
const OUTPUT = fileURLToPath(new URL("../test-output/setup-once/", import.meta.url));
const FIRST_RUN = "First run? Set up this installation";

describe.skipIf(missing.length > 0)(
  missing.length > 0 ? `${SUITE} — skipped, missing: ${missing.join(", ")}` : SUITE,
  () => {
    let system: AppSystem;
    let browser: Browser;

    beforeAll(async () => {
      system = await startAppSystem({ provider: async (rootDir) => createFakeProvider({ rootDir }) });
      browser = await chromium.launch(CHROMIUM);
    }, 60_000);

    afterAll(async () => {
      await browser?.close();
      await system?.close();
    });

    async function pageIn(locale: string): Promise<Page> {
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale });
      const page = await context.newPage();
      page.on("pageerror", (error) => console.error(`page error: ${error.message}`));
      return page;
    }

    const setupState = async () => {
      const response = await fetch(`${system.web.url}/auth/setup`);
      return { status: response.status, body: await response.json() };
    };

    it("a setup form left open answers a plain sentence once someone else set up, in English and German", async () => {
      expect(await setupState()).toEqual({ status: 200, body: { result: { setUp: false } } });

      // Two people open the new installation; both see setup offered and open its form.
      const late = await pageIn("en-US");
      const lateDe = await pageIn("de-DE");
      await late.goto(system.web.url);
      await late.getByRole("button", { name: FIRST_RUN, exact: true }).click();
      await lateDe.goto(system.web.url);
      await lateDe
        .getByRole("button", { name: "Erster Start? Installation einrichten", exact: true })
        .click();

      const first = await pageIn("en-US");
      expect(await firstRunSetup(first, system.web.url)).toMatch(/^rkz_/);
      expect(await setupState()).toEqual({ status: 200, body: { result: { setUp: true } } });

      await late.getByRole("button", { name: "Set up", exact: true }).click();
      const alert = late.getByRole("alert");
      await alert.waitFor();
      expect(await alert.textContent()).toBe(
        "This installation is already set up. Sign in with your API token, or ask its owner for an invite.",
      );
      // The sign-in is what is left, without setup offered.
      await late.getByLabel("API token").waitFor();
      expect(await late.getByRole("button", { name: FIRST_RUN }).count()).toBe(0);
      await late.screenshot({ path: path.join(OUTPUT, "already-set-up.png") });

      await lateDe.getByRole("button", { name: "Einrichten", exact: true }).click();
      const alertDe = lateDe.getByRole("alert");
      await alertDe.waitFor();
      expect(await alertDe.textContent()).toBe(
        "Diese Installation ist bereits eingerichtet. Melden Sie sich mit Ihrem API-Token an oder bitten Sie ihren Besitzer um eine Einladung.",
      );
      expect(await lateDe.content()).not.toContain("ALREADY_BOOTSTRAPPED");
    });

    it("the sign-in page of an installation already set up does not offer setup", async () => {
      const page = await pageIn("en-US");
      // The page has asked and heard the answer before it is judged.
      const asked = page.waitForResponse((r) => r.url().endsWith("/auth/setup"));
      await page.goto(system.web.url);
      await page.getByLabel("API token").waitFor();
      expect((await asked).status()).toBe(200);
      // Two frames later React has rendered what it heard.
      await page.evaluate(() => {
        const frame = (globalThis as any).requestAnimationFrame as (run: () => void) => void;
        return new Promise<void>((r) => frame(() => frame(r)));
      });
      expect(await page.getByRole("button", { name: FIRST_RUN }).count()).toBe(0);
      await page.screenshot({ path: path.join(OUTPUT, "sign-in-after-setup.png") });
    });
  },
);
