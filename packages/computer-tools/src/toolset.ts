/**
 * Which tools a run gets (TOOL-1, BRW-1, BRW-6): by the computer's capabilities and the model's.
 * No desktop → no desktop tools; no vision → no screenshots; no page browser → desktop only.
 */
import type { AgentTool } from "@mariozechner/pi-agent-core";
import type { TSchema } from "typebox";
import type { ToolName } from "./schemas.ts";
import { hasPageBrowser } from "./services-internal.ts";
import { newToolState, type ToolSession } from "./session.ts";
import { launchApp, openPath, requestTakeover } from "./tools/apps.ts";
import { browserAct, browserNavigate, browserSnapshot } from "./tools/browser.ts";
import type { ToolFactory } from "./tools/common.ts";
import { computerAct, computerObserve } from "./tools/desktop.ts";
import { attachFile, listFiles, readFile, writeFile } from "./tools/files.ts";
import { shell } from "./tools/shell.ts";

export interface ToolCapabilities {
  readonly desktop: boolean;
  readonly pageBrowser: boolean;
  readonly vision: boolean;
}

const FACTORIES: Record<ToolName, ToolFactory> = {
  computer_observe: computerObserve,
  computer_act: computerAct,
  shell,
  read_file: readFile,
  write_file: writeFile,
  list_files: listFiles,
  attach_file: attachFile,
  open_path: openPath,
  launch_app: launchApp,
  request_takeover: requestTakeover,
  browser_navigate: browserNavigate,
  browser_snapshot: browserSnapshot,
  browser_act: browserAct,
};

/** Tools that change something; the rest are read-only and never recorded (TOOL-4). */
export const MUTATING_TOOLS: ReadonlySet<ToolName> = new Set([
  "computer_act",
  "shell",
  "write_file",
  "attach_file",
  "open_path",
  "launch_app",
  "browser_navigate",
  "browser_act",
]);

export function offeredToolNames(caps: ToolCapabilities): ToolName[] {
  const names: ToolName[] = ["shell", "read_file", "write_file", "list_files", "attach_file"];
  if (caps.desktop) {
    if (caps.vision) names.push("computer_observe");
    names.push("computer_act", "open_path", "launch_app");
  }
  if (caps.desktop && caps.pageBrowser) names.push("browser_navigate", "browser_snapshot", "browser_act");
  names.push("request_takeover");
  return names;
}

export function capabilitiesOf(session: ToolSession): ToolCapabilities {
  const provider = session.ctx.provider;
  return {
    desktop: provider.capabilities.desktop,
    pageBrowser: hasPageBrowser(session.ctx, session.browser),
    vision: session.model.vision,
  };
}

/** The run's tools, sharing one per-session memory (frames for TOOL-2/3). */
export function createComputerTools(
  session: ToolSession,
  caps = capabilitiesOf(session),
): AgentTool<TSchema>[] {
  const state = newToolState();
  return offeredToolNames(caps).map((name) => FACTORIES[name](session, state));
}

/** The part of the system prompt that explains the computer (BRW-6 for models without vision). */
export function computerSystemPrompt(caps: ToolCapabilities): string {
  const lines = [
    "You have your own Linux computer. Your workspace is the current folder of `shell` and the root of file paths.",
    "Use shell and the file tools for files and programs.",
  ];
  if (caps.desktop && caps.pageBrowser) {
    lines.push(
      "For web pages, use browser_navigate, browser_snapshot and browser_act: they read text and act on element refs.",
    );
  }
  if (caps.desktop && caps.vision) {
    lines.push(
      "computer_observe and computer_act work with screenshots and pixels, for anything page tools cannot do.",
    );
  }
  if (caps.desktop && !caps.vision) {
    lines.push(
      "You cannot see screenshots. When a page cannot be operated with the page tools (frames, canvas, " +
        "custom widgets), or it needs a login, a code or a CAPTCHA, call request_takeover and say what a person must do.",
    );
  }
  lines.push("Never type passwords or secrets you were not given; ask with request_takeover instead.");
  return lines.join("\n");
}
