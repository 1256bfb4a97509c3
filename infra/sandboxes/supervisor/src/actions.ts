/**
 * Desktop actions (TOOL-1) validated and turned into xdotool steps — pure, no processes.
 * A step is either an xdotool argv (without the binary) or a wait.
 */
import { SCREEN_HEIGHT, SCREEN_WIDTH } from "./stack-argv.ts";

export type MouseButton = "left" | "right" | "middle";

export type ActionStep =
  | { readonly kind: "xdotool"; readonly args: string[] }
  | { readonly kind: "wait"; readonly ms: number };

export class InvalidActionError extends Error {
  override readonly name = "InvalidActionError";
}

const BUTTONS: Record<MouseButton, string> = { left: "1", middle: "2", right: "3" };
/** One or more space-separated combos of X keysym names joined by "+": "ctrl+l", "Return", "shift+Tab". */
const KEY_SPEC = /^[A-Za-z0-9_]+(\+[A-Za-z0-9_]+)*( [A-Za-z0-9_]+(\+[A-Za-z0-9_]+)*)*$/;
export const MAX_WAIT_MS = 30_000;
export const MAX_TEXT_LENGTH = 10_000;
const MAX_SCROLL_STEPS = 100;

function record(value: unknown): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new InvalidActionError("an action must be an object");
  }
  return value as Record<string, unknown>;
}

function coordinate(value: unknown, name: string, max: number): string {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0 || value >= max) {
    throw new InvalidActionError(`${name} must be an integer in [0, ${max})`);
  }
  return String(value);
}

function point(value: unknown, name: string): [string, string] {
  const p = record(value);
  return [coordinate(p.x, `${name}.x`, SCREEN_WIDTH), coordinate(p.y, `${name}.y`, SCREEN_HEIGHT)];
}

function button(value: unknown): string {
  if (value === undefined) return BUTTONS.left;
  if (value === "left" || value === "right" || value === "middle") return BUTTONS[value];
  throw new InvalidActionError("button must be left, right or middle");
}

function optionalMove(action: Record<string, unknown>): string[] {
  if (action.x === undefined && action.y === undefined) return [];
  return ["mousemove", coordinate(action.x, "x", SCREEN_WIDTH), coordinate(action.y, "y", SCREEN_HEIGHT)];
}

function steps(value: unknown, name: string): number {
  if (value === undefined) return 0;
  if (typeof value !== "number" || !Number.isInteger(value) || Math.abs(value) > MAX_SCROLL_STEPS) {
    throw new InvalidActionError(`${name} must be an integer of at most ${MAX_SCROLL_STEPS} steps`);
  }
  return value;
}

/** One action to the steps that perform it; throws `InvalidActionError` for a malformed action. */
export function actionSteps(input: unknown): ActionStep[] {
  const action = record(input);
  switch (action.type) {
    case "move":
      return [{ kind: "xdotool", args: ["mousemove", ...point(action, "move")] }];
    case "click": {
      const move = optionalMove(action);
      const repeat = action.double === true ? ["--repeat", "2", "--delay", "80"] : [];
      if (action.double !== undefined && typeof action.double !== "boolean") {
        throw new InvalidActionError("double must be a boolean");
      }
      return [{ kind: "xdotool", args: [...move, "click", ...repeat, button(action.button)] }];
    }
    case "drag": {
      const b = button(action.button);
      const [fx, fy] = point(action.from, "from");
      const [tx, ty] = point(action.to, "to");
      return [
        { kind: "xdotool", args: ["mousemove", fx, fy, "mousedown", b] },
        // An intermediate move lets pages see a drag, not a teleport.
        {
          kind: "xdotool",
          args: [
            "mousemove",
            String(Math.round((Number(fx) + Number(tx)) / 2)),
            String(Math.round((Number(fy) + Number(ty)) / 2)),
          ],
        },
        { kind: "xdotool", args: ["mousemove", tx, ty, "mouseup", b] },
      ];
    }
    case "scroll": {
      const dy = steps(action.dy, "dy");
      const dx = steps(action.dx, "dx");
      if (action.dy === undefined) throw new InvalidActionError("dy is required");
      const clicks: string[] = [];
      // X buttons 4/5 scroll up/down, 6/7 left/right; one click is one wheel notch.
      if (dy !== 0)
        clicks.push("click", "--repeat", String(Math.abs(dy)), "--delay", "10", dy > 0 ? "5" : "4");
      if (dx !== 0)
        clicks.push("click", "--repeat", String(Math.abs(dx)), "--delay", "10", dx > 0 ? "7" : "6");
      const args = [...optionalMove(action), ...clicks];
      return args.length === 0 ? [] : [{ kind: "xdotool", args }];
    }
    case "type": {
      if (typeof action.text !== "string" || action.text.length > MAX_TEXT_LENGTH) {
        throw new InvalidActionError(`text must be a string of at most ${MAX_TEXT_LENGTH} characters`);
      }
      if (action.text.length === 0) return [];
      // "--" ends options: text starting with "-" is typed, not parsed.
      return [{ kind: "xdotool", args: ["type", "--delay", "12", "--", action.text] }];
    }
    case "key": {
      if (typeof action.keys !== "string" || !KEY_SPEC.test(action.keys)) {
        throw new InvalidActionError('keys must be xdotool combos like "ctrl+l" or "Return"');
      }
      return [{ kind: "xdotool", args: ["key", "--clearmodifiers", "--", ...action.keys.split(" ")] }];
    }
    case "wait": {
      const ms = action.ms;
      if (typeof ms !== "number" || !Number.isFinite(ms) || ms < 0 || ms > MAX_WAIT_MS) {
        throw new InvalidActionError(`ms must be a number in [0, ${MAX_WAIT_MS}]`);
      }
      return [{ kind: "wait", ms }];
    }
    default:
      throw new InvalidActionError(`unknown action type ${JSON.stringify(action.type)}`);
  }
}
