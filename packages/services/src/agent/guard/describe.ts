/**
 * The pending action as a person reads it before approving (BRW-8): one line per mutating tool
 * call, built like its activity line (typed and filled text counted, never shown; file contents
 * never shown) and redacted (packages/log) before it is stored or shown.
 */

import { redactText } from "@rakazo/log";
import type { DesktopAction, PageAction } from "@rakazo/sandbox";
import { describeDesktopAction, describePageAction, shellLine } from "../../activity/lines.ts";

/** The most of a description a person is shown. */
export const DESCRIPTION_CHARS = 500;

type Args = Record<string, unknown>;

function line(tool: string, a: Args): string {
  switch (tool) {
    case "shell": {
      if (typeof a.command === "string") return `$ ${a.command}`;
      return `$ ${shellLine(Array.isArray(a.argv) ? a.argv.map(String) : [])}`;
    }
    case "write_file":
      return `write_file ${String(a.path)}${typeof a.size === "number" ? ` (${a.size} bytes)` : ""}`;
    case "attach_file":
    case "open_path":
      return `${tool} ${String(a.path)}`;
    case "launch_app":
      return `launch_app ${shellLine([String(a.app), ...(Array.isArray(a.args) ? a.args.map(String) : [])])}`;
    case "browser_navigate":
      return `browser_navigate ${String(a.url)}`;
    case "browser_act":
      return `browser_act ${((a.actions as PageAction[]) ?? []).map(describePageAction).join(", ")}`;
    case "computer_act":
      return `computer_act ${((a.actions as DesktopAction[]) ?? []).map(describeDesktopAction).join(", ")}`;
    default:
      return tool;
  }
}

export function describeMutation(tool: string, args: unknown): string {
  const text = redactText(line(tool, (args ?? {}) as Args));
  return text.length > DESCRIPTION_CHARS ? `${text.slice(0, DESCRIPTION_CHARS - 1)}…` : text;
}
