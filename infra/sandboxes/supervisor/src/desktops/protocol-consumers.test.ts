/**
 * One `DesktopAction` / `PageAction` (TOOL-1, BRW-1): the API's `computer/act` input,
 * the agent's `computer_act` / `browser_act` tools (Pi's validator and the advertised plain
 * JSON Schema) and the supervisor (`actionSteps`, and `page.act` through the method table)
 * accept and refuse exactly what @rakazo/protocol's schema does. Samples sit on the schema's
 * own limits, so a copy with another `wait` limit, key grammar or coordinate bound diverges
 * here; changing a limit in the protocol moves every consumer with it.
 */
import { validateToolArguments } from "@mariozechner/pi-ai";
import { computerAct } from "@rakazo/api-contract";
import { SCHEMAS, toolJsonSchemas } from "@rakazo/computer-tools";
import {
  DESKTOP_SCREEN,
  desktopActionSchema,
  MAX_SCROLL_STEPS,
  MAX_TYPE_CHARS,
  MAX_WAIT_MS,
  PAGE_MAX_WAIT_MS,
  pageActionSchema,
  SUPERVISOR_METHODS,
} from "@rakazo/protocol";
import { Compile } from "typebox/compile";
import { describe, expect, it } from "vitest";
import { actionSteps } from "./actions.ts";

const W = DESKTOP_SCREEN.width;
const H = DESKTOP_SCREEN.height;

/** [action, what the one schema must say]: the expectation pins the schema itself too. */
const DESKTOP_SAMPLES: [unknown, boolean][] = [
  [{ type: "move", x: 0, y: 0 }, true],
  [{ type: "move", x: W - 1, y: H - 1 }, true],
  [{ type: "move", x: W, y: 0 }, false],
  [{ type: "move", x: 0, y: H }, false],
  [{ type: "move", x: -1, y: 0 }, false],
  [{ type: "move", x: 1.5, y: 0 }, false],
  [{ type: "move", x: 1, y: 1, extra: true }, false],
  [{ type: "click" }, true],
  [{ type: "click", x: 10, y: 20, button: "right", double: true }, true],
  [{ type: "click", x: 10 }, false],
  [{ type: "click", button: "side" }, false],
  [{ type: "drag", from: { x: 0, y: 0 }, to: { x: W - 1, y: H - 1 } }, true],
  [{ type: "drag", from: { x: 0, y: 0 }, to: { x: W, y: 0 } }, false],
  [{ type: "scroll", dy: MAX_SCROLL_STEPS }, true],
  [{ type: "scroll", dy: -MAX_SCROLL_STEPS, dx: 3, x: 5, y: 5 }, true],
  [{ type: "scroll", dy: MAX_SCROLL_STEPS + 1 }, false],
  [{ type: "scroll", dx: 1 }, false],
  [{ type: "scroll", dy: 1, y: 5 }, false],
  [{ type: "type", text: "--help 日本" }, true],
  [{ type: "type", text: "x".repeat(MAX_TYPE_CHARS) }, true],
  [{ type: "type", text: "x".repeat(MAX_TYPE_CHARS + 1) }, false],
  [{ type: "type", text: "" }, false],
  [{ type: "key", keys: "ctrl+l" }, true],
  [{ type: "key", keys: "Return" }, true],
  [{ type: "key", keys: "ctrl+a BackSpace" }, true],
  [{ type: "key", keys: "shift+Tab" }, true],
  [{ type: "key", keys: "" }, false],
  [{ type: "key", keys: "ctrl+" }, false],
  [{ type: "key", keys: "+++" }, false],
  [{ type: "key", keys: "--help" }, false],
  [{ type: "key", keys: "$(reboot)" }, false],
  [{ type: "key", keys: "a;b" }, false],
  [{ type: "wait", ms: 0 }, true],
  [{ type: "wait", ms: MAX_WAIT_MS }, true],
  [{ type: "wait", ms: MAX_WAIT_MS + 1 }, false],
  [{ type: "wait", ms: -1 }, false],
  [{ type: "launch" }, false],
  [null, false],
  ["click", false],
];

const PAGE_SAMPLES: [unknown, boolean][] = [
  [{ type: "click", ref: "e1" }, true],
  [{ type: "click", ref: "" }, false],
  [{ type: "fill", ref: "e1", text: "hello" }, true],
  [{ type: "fill", ref: "e1" }, false],
  [{ type: "select", ref: "e1", value: "b" }, true],
  [{ type: "check", ref: "e1", checked: "yes" }, false],
  [{ type: "press", key: "Enter" }, true],
  [{ type: "press", key: "Enter; rm" }, false],
  [{ type: "scroll", dy: 400 }, true],
  [{ type: "scroll", dy: 0.5 }, false],
  [{ type: "wait", ms: PAGE_MAX_WAIT_MS }, true],
  [{ type: "wait", ms: PAGE_MAX_WAIT_MS + 1 }, false],
  [{ type: "hover", ref: "e1" }, false],
];

function accepts(run: () => unknown): boolean {
  try {
    run();
    return true;
  } catch {
    return false;
  }
}

/** Pi's own validator, as it runs on every tool call. */
function piAccepts(tool: "computer_act" | "browser_act", args: Record<string, unknown>): boolean {
  return accepts(() =>
    validateToolArguments(
      { name: tool, description: "", parameters: SCHEMAS[tool] },
      { type: "toolCall", id: "t", name: tool, arguments: args },
    ),
  );
}

describe("one DesktopAction schema, three consumers", () => {
  const advertised = Compile(toolJsonSchemas().computer_act as never);

  it.each(DESKTOP_SAMPLES.map(([action, valid]) => [JSON.stringify(action), action, valid] as const))(
    "%s",
    (_, action, valid) => {
      expect(desktopActionSchema.safeParse(action).success, "protocol schema").toBe(valid);
      const api = computerAct.input.safeParse({
        computerId: `cmp_${"a".repeat(20)}`,
        botId: `bot_${"b".repeat(20)}`,
        actions: [action],
      }).success;
      expect(api, "API computer/act").toBe(valid);
      expect(piAccepts("computer_act", { actions: [action] }), "agent tool (Pi)").toBe(valid);
      expect(advertised.Check({ actions: [action] }), "agent tool (advertised JSON Schema)").toBe(valid);
      expect(
        accepts(() => actionSteps(action)),
        "supervisor actionSteps",
      ).toBe(valid);
    },
  );
});

describe("one PageAction schema, agent tool and supervisor", () => {
  const advertised = Compile(toolJsonSchemas().browser_act as never);
  const supervisorParams = SUPERVISOR_METHODS["page.act"].params;

  it.each(PAGE_SAMPLES.map(([action, valid]) => [JSON.stringify(action), action, valid] as const))(
    "%s",
    (_, action, valid) => {
      expect(pageActionSchema.safeParse(action).success, "protocol schema").toBe(valid);
      expect(piAccepts("browser_act", { actions: [action] }), "agent tool (Pi)").toBe(valid);
      expect(advertised.Check({ actions: [action] }), "agent tool (advertised JSON Schema)").toBe(valid);
      expect(
        supervisorParams.safeParse({ botId: "b", actions: [action] }).success,
        "supervisor page.act params",
      ).toBe(valid);
    },
  );
});
