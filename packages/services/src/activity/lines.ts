/**
 * How actions read in the activity feed (TOOL-4), shared by the agent's tools and the API so a
 * person's call and a bot's call look alike.
 */
import type { DesktopAction, PageAction } from "@rakazo/sandbox";

/** POSIX shell quoting, for showing argv as one command line. */
export function shellLine(argv: readonly string[]): string {
  return argv
    .map((a) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(a) ? a : `'${a.replaceAll("'", `'\\''`)}'`))
    .join(" ");
}

/** One desktop action for the activity line; typed text is never shown (it may be a password). */
export function describeDesktopAction(action: DesktopAction): string {
  switch (action.type) {
    case "click":
      return `${action.double ? "double-" : ""}click${action.x !== undefined ? `(${action.x},${action.y})` : ""}`;
    case "move":
      return `move(${action.x},${action.y})`;
    case "drag":
      return `drag(${action.from.x},${action.from.y}→${action.to.x},${action.to.y})`;
    case "scroll":
      return `scroll(${action.dy})`;
    case "type":
      return `type(${action.text.length} chars)`;
    case "key":
      return `key(${action.keys})`;
    case "wait":
      return `wait(${action.ms}ms)`;
  }
}

/** One page action for the activity line; filled text is counted, never shown. */
export function describePageAction(action: PageAction): string {
  switch (action.type) {
    case "fill":
      return `fill ${action.ref} (${action.text.length} chars)`;
    case "select":
      return `select ${action.ref}`;
    case "check":
      return `${action.checked ? "check" : "uncheck"} ${action.ref}`;
    case "press":
      return `press ${action.key}${action.ref ? ` on ${action.ref}` : ""}`;
    case "scroll":
      return `scroll ${action.dy}`;
    case "wait":
      return `wait ${action.ms}ms`;
    case "click":
      return `click ${action.ref}`;
  }
}
