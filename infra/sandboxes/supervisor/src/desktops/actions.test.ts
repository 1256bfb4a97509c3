import { describe, expect, it } from "vitest";
import { actionSteps, InvalidActionError } from "./actions.ts";

const args = (action: unknown): string[][] =>
  actionSteps(action).map((step) => (step.kind === "xdotool" ? step.args : ["wait", String(step.ms)]));

describe("actionSteps", () => {
  it("maps clicks, double clicks and buttons", () => {
    expect(args({ type: "click", x: 10, y: 20 })).toEqual([["mousemove", "10", "20", "click", "1"]]);
    expect(args({ type: "click", button: "right", double: true })).toEqual([
      ["click", "--repeat", "2", "--delay", "80", "3"],
    ]);
  });

  it("drags with button down, an intermediate move and button up", () => {
    expect(args({ type: "drag", from: { x: 0, y: 0 }, to: { x: 100, y: 50 } })).toEqual([
      ["mousemove", "0", "0", "mousedown", "1"],
      ["mousemove", "50", "25"],
      ["mousemove", "100", "50", "mouseup", "1"],
    ]);
  });

  it("scrolls with wheel buttons", () => {
    expect(args({ type: "scroll", x: 5, y: 5, dy: 3 })).toEqual([
      ["mousemove", "5", "5", "click", "--repeat", "3", "--delay", "10", "5"],
    ]);
    expect(args({ type: "scroll", dy: -1, dx: 2 })).toEqual([
      ["click", "--repeat", "1", "--delay", "10", "4", "click", "--repeat", "2", "--delay", "10", "7"],
    ]);
  });

  it("types text verbatim after --, so leading dashes and UTF-8 are text", () => {
    expect(args({ type: "type", text: "--help 日本" })).toEqual([
      ["type", "--delay", "12", "--", "--help 日本"],
    ]);
  });

  it("accepts key combos and refuses anything else", () => {
    expect(args({ type: "key", keys: "ctrl+l" })).toEqual([["key", "--clearmodifiers", "--", "ctrl+l"]]);
    expect(args({ type: "key", keys: "ctrl+a BackSpace" })).toEqual([
      ["key", "--clearmodifiers", "--", "ctrl+a", "BackSpace"],
    ]);
    for (const keys of ["", "rm -rf", "ctrl+", "a;b", "--help"]) {
      expect(() => actionSteps({ type: "key", keys })).toThrow(InvalidActionError);
    }
  });

  it("refuses off-screen or non-integer coordinates and unknown types", () => {
    for (const bad of [
      { type: "move", x: 1280, y: 0 },
      { type: "move", x: -1, y: 0 },
      { type: "move", x: 1.5, y: 0 },
      { type: "click", x: 1 },
      { type: "wait", ms: 60_000 },
      { type: "scroll" },
      { type: "launch" },
      null,
    ]) {
      expect(() => actionSteps(bad)).toThrow(InvalidActionError);
    }
  });
});
