// BRIDGE_KEY_PREFIX through the real bridge (a child process) in front of the real API on the
// fake provider: every key and screen the bridge derives starts with it — the client default's
// bare keys and a named client's alike — so this bridge's computers never meet those of a
// bridge without it (or with another) on the same API.
import { describe, expect, it } from "vitest";
import { useBridgeStack } from "./bridge-stack.ts";

const bridge = useBridgeStack("bridge-key-prefix", { BRIDGE_KEY_PREFIX: "acme/" });

describe("the bridge's key prefix", () => {
  it("goes in front of every derived key and screen, for the default client and named ones", async () => {
    const scope = { conversationId: "prefixed" };
    const bare = await bridge.stack().bridge("computer_create", { scope });
    expect(bare.json.result).toMatchObject({
      key: "acme/conversation:prefixed",
      screen: "acme/conversation:prefixed",
    });
    const named = await bridge.stack().bridge("computer_create", { scope }, bridge.token("alpha"));
    expect(named.json.result).toMatchObject({ key: "acme/client:alpha/conversation:prefixed" });
    const keys = [...(await bridge.liveComputers()).values()].map((c) => c.key).sort();
    expect(keys).toEqual(["acme/client:alpha/conversation:prefixed", "acme/conversation:prefixed"]);
    for (const [made, bearer] of [
      [bare, bridge.stack().bridgeToken],
      [named, bridge.token("alpha")],
    ] as const) {
      const { computerId, capability } = made.json.result;
      expect(
        (await bridge.stack().bridge("computer_destroy", { computerId, capability }, bearer)).status,
      ).toBe(200);
    }
  });
});
