// Issue 19 (EXT-3): identity is a pure function of the scope; sharing is opted into, never guessed.
import { describe, expect, it } from "vitest";
import { identityOf } from "./scope.ts";

describe("identityOf", () => {
  it("default: one computer and screen per conversation, whatever Team it is in", () => {
    const a = identityOf({ conversationId: "a", teamRoot: "t" });
    const b = identityOf({ conversationId: "b", teamRoot: "t" });
    expect(a).toEqual({ key: "conversation:a", screen: "conversation:a" });
    expect(b.key).not.toBe(a.key);
    expect(identityOf({ conversationId: "a" })).toEqual(a);
  });

  it("share: the Team's computer, a screen per conversation", () => {
    const a = identityOf({ conversationId: "a", teamRoot: "t", share: true });
    const b = identityOf({ conversationId: "b", teamRoot: "t", share: true });
    expect(a.key).toBe("team:t");
    expect(b.key).toBe(a.key);
    expect(b.screen).not.toBe(a.screen);
  });

  it("share without a Team root, or with an account, is refused", () => {
    expect(() => identityOf({ conversationId: "a", share: true })).toThrow(/teamRoot/);
    expect(() => identityOf({ conversationId: "a", teamRoot: "t", share: true, account: "x" })).toThrow(
      /exclusive/,
    );
  });

  it("account: one computer and screen for every conversation naming it", () => {
    expect(identityOf({ conversationId: "a", account: "ops" })).toEqual(
      identityOf({ conversationId: "b", teamRoot: "t", account: "ops" }),
    );
  });
});
