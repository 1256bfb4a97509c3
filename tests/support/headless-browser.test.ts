// BRW-7: the test runtime's `BROWSER_PROVIDER=emulator` browsers keep the PageBrowser contract.
import { requireTools, runPageBrowserContract } from "@rakazo/sandbox/testing";
import { describe } from "vitest";
import { HEADLESS_CHROMIUM, type HeadlessBrowserRuntime, startHeadlessBrowsers } from "./headless-browser.ts";

let runtime: HeadlessBrowserRuntime | undefined;

// The shared gate: a missing Chromium skips here with the reason in the title, and fails under CI=true.
const gate = requireTools("BROWSER_PROVIDER=emulator (headless Chromium of the test runtime)", [
  HEADLESS_CHROMIUM,
]);
describe.skipIf(gate.skip)(gate.title, () => {
  runPageBrowserContract({
    name: "BROWSER_PROVIDER=emulator (headless Chromium of the test runtime)",
    create: ({ navigationTimeoutMs }) => {
      runtime = startHeadlessBrowsers({ navigationTimeoutMs });
      return runtime.browsers.browserFor("computer-ref", async (name) => `downloads/${name}`);
    },
    close: async () => runtime?.close(),
    timeoutMs: 30_000,
  });
});
