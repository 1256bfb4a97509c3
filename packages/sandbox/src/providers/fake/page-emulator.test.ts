// BRW-3..5, BRW-7: the in-process page emulator keeps the PageBrowser contract.
import { runPageBrowserContract } from "../../testing/page-browser-contract.ts";
import { createPageEmulator } from "./page-emulator.ts";

runPageBrowserContract({
  name: "page emulator",
  create: ({ navigationTimeoutMs }) => createPageEmulator({ requestTimeoutMs: navigationTimeoutMs }),
});
