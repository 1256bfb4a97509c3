// The bridge's read/write/edit tools and its `file` tool, through the real bridge (a child
// process) in front of the real API on the fake provider, follow the one path rule with no bot
// named (docs/agent-tools.md): paths are relative to the workspace root, where its bash starts,
// and every answer carries the resolved workspace path, so a write and a read of the same
// relative path — in any spelling — name one file.
import { describe, expect, it } from "vitest";
import { useBridgeStack } from "./bridge-stack.ts";

const bridge = useBridgeStack("bridge-paths");
const stack = () => bridge.stack();

async function ok(tool: string, body: unknown) {
  const res = await stack().bridge(tool, body, bridge.token("alpha"));
  expect(res.status, `${tool}: ${JSON.stringify(res.json)}`).toBe(200);
  return res.json.result;
}

describe("bridge file tools: one path rule", () => {
  it("write, read, edit and file round-trip a relative path; bash sees the same file", async () => {
    const mine = await ok("computer_create", { scope: { conversationId: "paths" } });
    const held = { computerId: mine.computerId, capability: mine.capability };
    expect(await ok("write", { ...held, path: "./notes/plan.md", content: "one\n" })).toEqual({
      path: "notes/plan.md",
      bytes: 4,
    });
    expect(await ok("read", { ...held, path: "notes/plan.md" })).toEqual({
      path: "notes/plan.md",
      content: "one\n",
      bytes: 4,
    });
    expect(
      await ok("edit", { ...held, path: "notes/../notes/plan.md", oldText: "one", newText: "two" }),
    ).toEqual({ path: "notes/plan.md", bytes: 4 });
    expect(await ok("file", { ...held, op: "read", path: "notes/./plan.md" })).toMatchObject({
      path: "notes/plan.md",
      content: "two\n",
    });
    const cat = await ok("computer_exec", { ...held, argv: ["cat", "notes/plan.md"] });
    expect(cat.stdout).toBe("two\n");
    const refused = await stack().bridge("read", { ...held, path: "../x" }, bridge.token("alpha"));
    expect(refused.json.error.code).toBe("INVALID_PATH");
  });
});
