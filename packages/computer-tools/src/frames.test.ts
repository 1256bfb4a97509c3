// TOOL-2 and TOOL-3 as pure rules; tests/tools/tools.test.ts checks them through the tools.
import { describe, expect, it } from "vitest";
import { FrameMemory } from "./frames.ts";

const click = [{ type: "click" as const, x: 5, y: 5 }];

describe("frame memory", () => {
  it("sends an image once per distinct frame", () => {
    const frames = new FrameMemory();
    expect(frames.shouldSendImage("a")).toBe(true);
    expect(frames.shouldSendImage("a")).toBe(false);
    expect(frames.shouldSendImage("b")).toBe(true);
    expect(frames.shouldSendImage("a")).toBe(true);
  });

  it("refuses the third identical click on an unchanged frame, not a changed one", () => {
    const frames = new FrameMemory();
    frames.recordAct(click, "a", "a");
    expect(frames.refusal(click)).toBeUndefined();
    frames.recordAct(click, "a", "a");
    expect(frames.refusal(click)).toMatch(/browser_snapshot/);
    expect(frames.refusal([{ type: "click", x: 6, y: 5 }])).toBeUndefined();
    frames.recordAct([{ type: "key", keys: "Return" }], "a", "b");
    expect(frames.refusal(click)).toBeUndefined();
  });

  it("waits are not visual and never count", () => {
    const frames = new FrameMemory();
    const wait = [{ type: "wait" as const, ms: 10 }];
    frames.recordAct(wait, "a", "a");
    frames.recordAct(wait, "a", "a");
    expect(frames.refusal(wait)).toBeUndefined();
  });
});
