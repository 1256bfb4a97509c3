/**
 * A message in the computer view goes once it stops being true, in real Chromium against the
 * real API, worker and Postgres (fake provider, the Team Computer): a failed Take control's
 * message (the API's answer made a 503 once by the test, as an API restart would) is gone when
 * the computer's state changes under it, and a failed action's message when the next one starts.
 *
 * Skipped locally (fails under CI=true) without Chromium (scripts/test-tools.sh).
 */
import type { RakazoClient } from "@rakazo/client";
import { createFakeProvider } from "@rakazo/sandbox";
import { missingOrFail } from "@rakazo/sandbox/testing";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AppSystem, startAppSystem } from "./testing/app-system.ts";
import { firstRunSetup } from "./testing/first-run.ts";
import { CHROMIUM } from "./testing/screen-system.ts";

const SUITE = "the computer view's messages end with what they are about";
const missing = missingOrFail(SUITE, [CHROMIUM.executablePath]);
const UNAVAILABLE = {
  error: { code: "DATABASE_UNAVAILABLE", message: "the database is unavailable; retry shortly" },
};

describe.skipIf(missing.length > 0)(
  missing.length > 0 ? `${SUITE} — skipped, missing: ${missing.join(", ")}` : SUITE,
  () => {
    let system: AppSystem;
    let browser: Browser;
    let page: Page;
    let client: RakazoClient;
    let computerId = "";

    const waitForState = async (state: string) => {
      const deadline = Date.now() + 30_000;
      while ((await client.call("computer/get", { computerId })).state !== state) {
        if (Date.now() > deadline) throw new Error(`the Team Computer never reached ${state}`);
        await new Promise((done) => setTimeout(done, 200));
      }
    };

    /** The next call of `rpc` from the page answers 503, as while the API restarts. */
    const failOnce = (rpc: string) =>
      page.route(
        `**/api/rpc/${rpc}`,
        (route) =>
          route.fulfill({ status: 503, contentType: "application/json", body: JSON.stringify(UNAVAILABLE) }),
        { times: 1 },
      );

    beforeAll(async () => {
      system = await startAppSystem({ provider: async (rootDir) => createFakeProvider({ rootDir }) });
      browser = await chromium.launch(CHROMIUM);
      page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
      page.on("pageerror", (error) => console.error(`page error: ${error.message}`));
      client = system.client(await firstRunSetup(page, system.web.url));
      const spaceId = (await client.call("space/list", {}))[0]?.id ?? "";
      computerId = (await client.call("computer/list", { spaceId }))[0]?.id ?? "";
      await client.call("computer/start", { computerId });
      await waitForState("running");
    }, 90_000);

    afterAll(async () => {
      await browser?.close();
      await system?.close();
    });

    const message = () => page.locator("p.error[role=alert]");

    it("a failed Take control's message goes when the computer's state changes", async () => {
      await page.goto(`${system.web.url}/#/computers/${computerId}`);
      await failOnce("computer/takeControl");
      await page.getByRole("button", { name: "Take control", exact: true }).click();
      await expect.poll(() => message().textContent()).toContain("DATABASE_UNAVAILABLE");

      await client.call("computer/stop", { computerId });
      await expect
        .poll(() => page.getByTestId("computer-state").textContent(), { timeout: 15_000 })
        .toBe("stopped");
      await expect.poll(() => message().count()).toBe(0);
    }, 60_000);

    it("a failed action's message goes when the next action starts", async () => {
      await failOnce("computer/start");
      await page.getByRole("button", { name: "Start", exact: true }).click();
      await expect.poll(() => message().textContent()).toContain("DATABASE_UNAVAILABLE");
      await page.getByRole("button", { name: "Start", exact: true }).click();
      await expect
        .poll(() => page.getByTestId("computer-state").textContent(), { timeout: 15_000 })
        .toBe("running");
      expect(await message().count()).toBe(0);
    }, 60_000);
  },
);
