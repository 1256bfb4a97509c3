/**
 * Fenced page-browser verbs (BRW-1): the same ownership, bot and lease checks as desktop
 * controls. Which page browser serves a computer is `BrowserProviderMode` (BRW-7):
 * - `sandbox`: the machine's own `pageBrowser` (the bot's visible Chromium tab);
 * - `fake`: an in-process page emulator per machine (no JavaScript; tests and fake computers);
 * - `emulator`: a headless Chromium the test runtime started (`ctx.headlessBrowsers`), driven by
 *   the same page methods as the computer's own browser, but never the live logged-in one.
 * Unset, the provider's declared `capabilities.defaultPageBrowser` decides (the fake: `fake`).
 */
import type {
  PageAction,
  PageActResult,
  PageBrowser,
  PageNavigation,
  PageSnapshot,
  Sandbox,
} from "@rakazo/sandbox";
import { createPageEmulator } from "@rakazo/sandbox";
import type { Caller, ServiceContext } from "../context.ts";
import { AppError } from "../errors.ts";
import { viaProvider } from "../sandbox-errors.ts";
import { type FencedTarget, fencedMachine } from "./fenced.ts";

export const BROWSER_PROVIDER_MODES = ["sandbox", "fake", "emulator"] as const;
export type BrowserProviderMode = (typeof BROWSER_PROVIDER_MODES)[number];

/** Where a page emulator saves downloads, inside the workspace. */
export const DOWNLOADS_DIR = "downloads";

const emulators = new Map<string, PageBrowser>();

export function defaultBrowserMode(ctx: Pick<ServiceContext, "provider">): BrowserProviderMode {
  return ctx.provider.capabilities.defaultPageBrowser;
}

/** Whether a computer of this provider can offer page tools under `mode`. */
export function hasPageBrowser(
  ctx: Pick<ServiceContext, "provider" | "headlessBrowsers">,
  mode?: BrowserProviderMode,
): boolean {
  const resolved = mode ?? defaultBrowserMode(ctx);
  if (resolved === "emulator") return ctx.headlessBrowsers !== undefined;
  return resolved === "fake" || ctx.provider.capabilities.pageBrowser;
}

async function saveInWorkspace(sandbox: Sandbox, name: string, data: Uint8Array): Promise<string> {
  const path = `${DOWNLOADS_DIR}/${name}`;
  await sandbox.files.write(path, data);
  return path;
}

export function pageBrowserOf(
  sandbox: Sandbox,
  mode: BrowserProviderMode,
  ctx?: Pick<ServiceContext, "headlessBrowsers">,
): PageBrowser {
  if (mode === "emulator") {
    if (!ctx?.headlessBrowsers)
      throw new AppError(
        "UNSUPPORTED",
        "BROWSER_PROVIDER=emulator needs the headless browser a test runtime starts; use sandbox or fake",
      );
    return ctx.headlessBrowsers.browserFor(sandbox.ref, (name, data) => saveInWorkspace(sandbox, name, data));
  }
  if (mode === "fake") {
    let emulator = emulators.get(sandbox.ref);
    if (!emulator) {
      emulator = createPageEmulator({
        saveDownload: (_botId, name, data) => saveInWorkspace(sandbox, name, data),
      });
      emulators.set(sandbox.ref, emulator);
    }
    return emulator;
  }
  if (!sandbox.pageBrowser)
    throw new AppError("UNSUPPORTED", "this computer has no page browser; use desktop tools");
  return sandbox.pageBrowser;
}

type PageInput = FencedTarget & { browser?: BrowserProviderMode };

async function fencedPage(ctx: ServiceContext, caller: Caller, input: PageInput): Promise<PageBrowser> {
  const { sandbox } = await fencedMachine(ctx, caller, input);
  return pageBrowserOf(sandbox, input.browser ?? defaultBrowserMode(ctx), ctx);
}

export async function navigatePage(
  ctx: ServiceContext,
  caller: Caller,
  input: PageInput & { url: string },
): Promise<PageNavigation> {
  const page = await fencedPage(ctx, caller, input);
  return viaProvider(() => page.navigate(input.botId, input.url));
}

export async function snapshotPage(
  ctx: ServiceContext,
  caller: Caller,
  input: PageInput,
): Promise<PageSnapshot> {
  const page = await fencedPage(ctx, caller, input);
  return viaProvider(() => page.snapshot(input.botId));
}

export async function actOnPage(
  ctx: ServiceContext,
  caller: Caller,
  input: PageInput & { actions: readonly PageAction[] },
): Promise<PageActResult> {
  const page = await fencedPage(ctx, caller, input);
  return viaProvider(() => page.act(input.botId, input.actions));
}
