// EXT-3: identity is a pure function of the scope; sharing is opted into, never guessed.
import { describe, expect, it } from "vitest";
import { identityOf as identityWithin, type Scope } from "./scope.ts";

const identityOf = (scope: Scope) => identityWithin(scope, "default");

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

describe("identityOf within a named client", () => {
  it("prefixes key and screen of every mode with the client, so two clients never share a name", () => {
    const scopes: Scope[] = [
      { conversationId: "a" },
      { conversationId: "a", teamRoot: "t", share: true },
      { conversationId: "a", account: "ops" },
    ];
    for (const scope of scopes) {
      const bare = identityOf(scope);
      const named = identityWithin(scope, "harness-b");
      expect(named).toEqual({
        key: `client:harness-b/${bare.key}`,
        screen: `client:harness-b/${bare.screen}`,
      });
      expect(identityWithin(scope, "harness-c").key).not.toBe(named.key);
      // The default client's bare keys never start like a named client's.
      expect(bare.key.startsWith("client:")).toBe(false);
    }
  });

  it("a conversation id that spells another client's prefix stays in its own namespace", () => {
    const forged = identityOf({ conversationId: "x", account: "client:b/conversation:a" });
    expect(forged.key).not.toBe(identityWithin({ conversationId: "a" }, "b").key);
    expect(forged.key.startsWith("account:")).toBe(true);
  });

  it("a key or screen past the API's 200 characters is refused here", () => {
    const long = "n".repeat(160);
    expect(() =>
      identityWithin({ conversationId: "a", account: long }, "a-long-client-name-of-32-chars-x"),
    ).toThrow(/too long/);
    expect(identityWithin({ conversationId: "a", account: long }, "default").key).toBe(`account:${long}`);
  });

  it("the bridge's key prefix goes in front of everything; none keeps today's keys", () => {
    const scope = { conversationId: "a", teamRoot: "t", share: true };
    expect(identityWithin(scope, "default", "acme/")).toEqual({
      key: "acme/team:t",
      screen: "acme/team:t/conversation:a",
    });
    expect(identityWithin(scope, "b", "acme/").key).toBe("acme/client:b/team:t");
    expect(identityWithin(scope, "b", "")).toEqual(identityWithin(scope, "b"));
    expect(identityOf({ conversationId: "a" }).key).toBe("conversation:a");
  });
});
