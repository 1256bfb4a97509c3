// ARCH-2: the tool schemas are plain JSON Schema another framework can register unchanged.
import { validateToolArguments } from "@mariozechner/pi-ai";
import { Compile } from "typebox/compile";
import { describe, expect, it } from "vitest";
import { SCHEMAS, type ToolName, toolJsonSchemas } from "./schemas.ts";
import { offeredToolNames } from "./toolset.ts";

describe("tool schemas", () => {
  it("describe every tool as plain JSON Schema that accepts and rejects what the tools' validator does", () => {
    const json = toolJsonSchemas();
    expect(Object.keys(json).sort()).toEqual(Object.keys(SCHEMAS).sort());
    // The advertised copy carries no TypeBox symbols: another framework sees only JSON Schema.
    expect(Object.getOwnPropertySymbols(json.computer_act)).toEqual([]);
    for (const [tool, input, valid] of SAMPLES) {
      const label = `${tool} ${JSON.stringify(input)}`;
      // The validator Pi runs on every tool call, with the tool's own (TypeBox) schema.
      const piAccepts = accepts(() =>
        validateToolArguments(
          { name: tool, description: "", parameters: SCHEMAS[tool] },
          {
            type: "toolCall",
            id: "t",
            name: tool,
            arguments: input as Record<string, unknown>,
          },
        ),
      );
      // A standard JSON Schema check of the advertised plain copy.
      const jsonAccepts = Compile(json[tool] as never).Check(input);
      expect(piAccepts, label).toBe(valid);
      expect(jsonAccepts, label).toBe(valid);
    }
    // Every tool has at least one accepted and one refused sample.
    for (const tool of Object.keys(SCHEMAS)) {
      expect(new Set(SAMPLES.filter(([t]) => t === tool).map(([, , v]) => v)), tool).toEqual(
        new Set([true, false]),
      );
    }
  });

  it("are offered by computer and model capability (TOOL-1, BRW-1, BRW-6)", () => {
    expect(offeredToolNames({ desktop: false, pageBrowser: false, vision: true })).toEqual([
      "shell",
      "read_file",
      "write_file",
      "list_files",
      "attach_file",
      "request_takeover",
    ]);
    const blind = offeredToolNames({ desktop: true, pageBrowser: true, vision: false });
    expect(blind).not.toContain("computer_observe");
    expect(blind).toContain("browser_act");
    const noPage = offeredToolNames({ desktop: true, pageBrowser: false, vision: true });
    expect(noPage).toContain("computer_observe");
    expect(noPage.some((n) => n.startsWith("browser_"))).toBe(false);
  });
});

function accepts(run: () => unknown): boolean {
  try {
    run();
    return true;
  } catch {
    return false;
  }
}

/** [tool, arguments, valid]: the limits the tools document, from both sides. */
const SAMPLES: [ToolName, unknown, boolean][] = [
  ["shell", { argv: ["echo", "hi"] }, true],
  ["shell", { argv: ["echo"], rogue: 1 }, false],
  ["read_file", { path: "notes/a.txt" }, true],
  ["read_file", {}, false],
  ["write_file", { path: "a.txt", content: "x" }, true],
  ["write_file", { path: "a.txt" }, false],
  ["list_files", {}, true],
  ["list_files", { path: ["a"] }, false],
  ["attach_file", { path: "a.txt", note: "the report" }, true],
  ["attach_file", { path: "a.txt", note: "x".repeat(501) }, false],
  ["open_path", { path: "a.txt" }, true],
  ["open_path", { path: "a.txt", app: "x" }, false],
  ["launch_app", { app: "gedit", args: ["a.txt"] }, true],
  ["launch_app", { app: "-rf" }, false],
  ["request_takeover", { reason: "solve the captcha" }, true],
  ["request_takeover", { reason: "" }, false],
  ["computer_observe", {}, true],
  ["computer_observe", { zoom: true }, false],
  [
    "computer_act",
    {
      actions: [
        { type: "click", x: 10, y: 20 },
        { type: "key", keys: "ctrl+l" },
      ],
    },
    true,
  ],
  ["computer_act", { actions: [] }, false],
  ["computer_act", { actions: [{ type: "click", x: -1, y: 0 }] }, false],
  ["computer_act", { actions: [{ type: "key", keys: "ctrl+l; rm -rf /" }] }, false],
  ["computer_act", { actions: [{ type: "teleport" }] }, false],
  ["browser_navigate", { url: "http://127.0.0.1/" }, true],
  ["browser_navigate", { url: "" }, false],
  ["browser_snapshot", {}, true],
  ["browser_snapshot", { full: true }, false],
  ["browser_act", { actions: [{ type: "click", ref: "e1" }] }, true],
  ["browser_act", { actions: [{ type: "click" }] }, false],
];
