// BRW-7: the test runtime's `BROWSER_PROVIDER=emulator` browsers keep the PageBrowser contract.
import { existsSync } from "node:fs";
import { runPageBrowserContract } from "@rakazo/sandbox/testing";
import { it } from "vitest";
import { HEADLESS_CHROMIUM, type HeadlessBrowserRuntime, startHeadlessBrowsers } from "./headless-browser.ts";

let runtime: HeadlessBrowserRuntime | undefined;

if (!existsSync(HEADLESS_CHROMIUM) && process.env.CI !== "true") {
  it.skip(`needs ${HEADLESS_CHROMIUM} (apt-get install chromium)`, () => {});
} else {
  runPageBrowserContract({
    name: "BROWSER_PROVIDER=emulator (headless Chromium of the test runtime)",
    create: ({ navigationTimeoutMs }) => {
      runtime = startHeadlessBrowsers({ navigationTimeoutMs });
      return runtime.browsers.browserFor("computer-ref", async (name) => `downloads/${name}`);
    },
    close: async () => runtime?.close(),
    timeoutMs: 30_000,
  });
}
