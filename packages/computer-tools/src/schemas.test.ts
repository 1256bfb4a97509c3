// ARCH-2: the tool schemas are plain JSON Schema another framework can register unchanged.
import { describe, expect, it } from "vitest";
import { SCHEMAS, toolJsonSchemas } from "./schemas.ts";
import { offeredToolNames } from "./toolset.ts";

describe("tool schemas", () => {
  it("round-trip through JSON unchanged and describe every tool", () => {
    const json = toolJsonSchemas();
    expect(Object.keys(json).sort()).toEqual(Object.keys(SCHEMAS).sort());
    expect(JSON.parse(JSON.stringify(json))).toEqual(json);
    expect(json.computer_act).toMatchObject({ type: "object", required: ["actions"] });
    const click = (
      json.computer_act.properties as {
        actions: { items: { anyOf: { properties: { type: { const: string } } }[] } };
      }
    ).actions.items.anyOf.map((v) => v.properties.type.const);
    expect(click).toEqual(["move", "click", "drag", "scroll", "type", "key", "wait"]);
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
