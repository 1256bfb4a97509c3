/**
 * The dock offers the Shell tab only where the computer's provider serves a browser terminal
 * (TRM-7): `computer/get` says so in `capabilities.terminal`, and the web app reads it, in real
 * Chromium against the real API, worker and Postgres. The provider is the fake with its
 * terminal capability switched by the test (as a deployment on a provider without one), so
 * both answers are seen on the same computer.
 *
 * Skipped locally (fails under CI=true) without Chromium (scripts/test-tools.sh).
 */
import { createFakeProvider, type ProviderCapabilities, type SandboxProvider } from "@rakazo/sandbox";
import { missingOrFail } from "@rakazo/sandbox/testing";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AppSystem, startAppSystem } from "./testing/app-system.ts";
import { firstRunSetup } from "./testing/first-run.ts";
import { CHROMIUM } from "./testing/screen-system.ts";

const SUITE = "the Shell tab follows the provider's terminal capability";
const missing = missingOrFail(SUITE, [CHROMIUM.executablePath]);

describe.skipIf(missing.length > 0)(
  missing.length > 0 ? `${SUITE} — skipped, missing: ${missing.join(", ")}` : SUITE,
  () => {
    let system: AppSystem;
    let browser: Browser;
    let page: Page;
    let token = "";
    let computerId = "";
    let terminal = false;

    beforeAll(async () => {
      system = await startAppSystem({
        provider: async (rootDir): Promise<SandboxProvider> => {
          const fake = createFakeProvider({ rootDir });
          return {
            ...fake,
            get capabilities(): ProviderCapabilities {
              return { ...fake.capabilities, terminal };
            },
          };
        },
      });
      browser = await chromium.launch(CHROMIUM);
      page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
      page.on("pageerror", (error) => console.error(`page error: ${error.message}`));
      token = await firstRunSetup(page, system.web.url);
      const client = system.client(token);
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

    const tabs = async () => {
      await page.goto(`${system.web.url}/#/computers/${computerId}`);
      await page.reload();
      const list = page.getByRole("tablist");
      await list.getByRole("tab", { name: "Screen", exact: true }).waitFor();
      return list.getByRole("tab").allTextContents();
    };

    it("without the capability: computer/get says so and the dock has no Shell tab", async () => {
      terminal = false;
      const computer = await system.client(token).call("computer/get", { computerId });
      expect(computer.capabilities).toEqual({ terminal: false });
      expect(await tabs()).toEqual(["Screen", "Files"]);
    });

    it("with it: computer/get says so and the dock offers the shell", async () => {
      terminal = true;
      const computer = await system.client(token).call("computer/get", { computerId });
      expect(computer.capabilities).toEqual({ terminal: true });
      expect(await tabs()).toEqual(["Screen", "Open shell", "Files"]);
    });
  },
);
