/**
 * Desktop actions (TOOL-1) validated with @rakazo/protocol's `desktopActionSchema` (the same
 * schema the API and the agent's tool use) and turned into xdotool steps — pure, no processes.
 * A step is either an xdotool argv (without the binary) or a wait.
 */
import { type ActResultWire, type DesktopAction, desktopActionSchema } from "@rakazo/protocol";

export type ActionStep =
  | { readonly kind: "xdotool"; readonly args: string[] }
  | { readonly kind: "wait"; readonly ms: number };

export class InvalidActionError extends Error {
  override readonly name = "InvalidActionError";
}

const BUTTONS = { left: "1", middle: "2", right: "3" } as const;

function parse(input: unknown): DesktopAction {
  const parsed = desktopActionSchema.safeParse(input);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue && issue.path.length > 0 ? `${issue.path.join(".")}: ` : "";
  throw new InvalidActionError(`${where}${issue?.message ?? "malformed action"}`);
}

function optionalMove(action: { x?: number; y?: number }): string[] {
  return action.x === undefined || action.y === undefined
    ? []
    : ["mousemove", String(action.x), String(action.y)];
}

/** One action to the steps that perform it; throws `InvalidActionError` for a malformed action. */
export function actionSteps(input: unknown): ActionStep[] {
  const action = parse(input);
  switch (action.type) {
    case "move":
      return [{ kind: "xdotool", args: ["mousemove", String(action.x), String(action.y)] }];
    case "click": {
      const repeat = action.double === true ? ["--repeat", "2", "--delay", "80"] : [];
      return [
        {
          kind: "xdotool",
          args: [...optionalMove(action), "click", ...repeat, BUTTONS[action.button ?? "left"]],
        },
      ];
    }
    case "drag": {
      const b = BUTTONS[action.button ?? "left"];
      const { from, to } = action;
      return [
        { kind: "xdotool", args: ["mousemove", String(from.x), String(from.y), "mousedown", b] },
        // An intermediate move lets pages see a drag, not a teleport.
        {
          kind: "xdotool",
          args: [
            "mousemove",
            String(Math.round((from.x + to.x) / 2)),
            String(Math.round((from.y + to.y) / 2)),
          ],
        },
        { kind: "xdotool", args: ["mousemove", String(to.x), String(to.y), "mouseup", b] },
      ];
    }
    case "scroll": {
      const { dy, dx = 0 } = action;
      const clicks: string[] = [];
      // X buttons 4/5 scroll up/down, 6/7 left/right; one click is one wheel notch.
      if (dy !== 0)
        clicks.push("click", "--repeat", String(Math.abs(dy)), "--delay", "10", dy > 0 ? "5" : "4");
      if (dx !== 0)
        clicks.push("click", "--repeat", String(Math.abs(dx)), "--delay", "10", dx > 0 ? "7" : "6");
      const args = [...optionalMove(action), ...clicks];
      return args.length === 0 ? [] : [{ kind: "xdotool", args }];
    }
    case "type":
      // "--" ends options: text starting with "-" is typed, not parsed.
      return [{ kind: "xdotool", args: ["type", "--delay", "12", "--", action.text] }];
    case "key":
      return [{ kind: "xdotool", args: ["key", "--clearmodifiers", "--", ...action.keys.split(" ")] }];
    case "wait":
      return [{ kind: "wait", ms: action.ms }];
  }
}

/**
 * Runs a batch in order and stops at the first action that fails: a malformed one as
 * `INVALID_ACTION`, one the desktop could not perform as `DESKTOP_UNAVAILABLE`, with its index.
 */
export async function runActions(
  actions: readonly unknown[],
  runStep: (step: ActionStep) => Promise<void>,
): Promise<ActResultWire> {
  const total = actions.length;
  for (let index = 0; index < total; index += 1) {
    try {
      for (const step of actionSteps(actions[index])) await runStep(step);
    } catch (error) {
      const code = error instanceof InvalidActionError ? "INVALID_ACTION" : "DESKTOP_UNAVAILABLE";
      return { completed: index, total, error: { code, message: (error as Error).message, index } };
    }
  }
  return { completed: total, total };
}
