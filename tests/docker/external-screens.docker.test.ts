// Screens (EXT-3, CMP-2): three conversations of one Team with `share: true` get one
// computer and three screens — three X displays, three Xvfb, three browsers with their own
// cookies. Default mode gives each conversation its own computer even within one Team.
// Everything is destroyed and nothing is left.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ExternalStack, pageServerCommand, startExternalStack } from "../support/external.ts";
import { requireDocker } from "../support/tools.ts";

const gate = await requireDocker("external screens through the bridge on Docker");

describe.skipIf(gate.skip)(gate.title, () => {
  let stack: ExternalStack;
  const team = `i19-team-${process.pid}`;

  beforeAll(async () => {
    stack = await startExternalStack();
  }, 120_000);

  afterAll(async () => {
    if (!stack) return;
    await stack.destroyAll();
    await stack.close();
  }, 180_000);

  const ok = async (tool: string, body: unknown) => {
    const res = await stack.bridge(tool, body);
    expect(res.status, `${tool}: ${JSON.stringify(res.json)}`).toBe(200);
    return res.json.result;
  };

  it("three screen identities on one shared computer: three displays, independent cookies", async () => {
    const agents = ["lead", "researcher", "writer"];
    const held = [];
    for (const agent of agents) {
      const made = await ok("computer_create", {
        scope: { conversationId: agent, teamRoot: team, share: true },
      });
      held.push({ computerId: made.computerId, capability: made.capability });
    }
    expect(new Set(held.map((h) => h.computerId)).size).toBe(1);
    const [first] = held;
    if (!first) throw new Error("no computer");

    await ok("bash", {
      ...first,
      command: pageServerCommand(8765),
    });
    for (const [i, h] of held.entries()) {
      await ok("computer_browser", {
        ...h,
        action: "navigate",
        url: `http://127.0.0.1:8765/set?who=${agents[i]}`,
      });
    }
    for (const [i, h] of held.entries()) {
      const page = await ok("computer_browser", { ...h, action: "navigate", url: "http://127.0.0.1:8765/" });
      expect(page.title).toBe(`who=${agents[i]}`);
    }

    const state = await ok("computers", first);
    expect(state.screens.map((s: { screen: string }) => s.screen).sort()).toEqual(
      agents.map((a) => `team:${team}/conversation:${a}`).sort(),
    );
    const displays = state.screens.map((s: { display: number }) => s.display);
    expect(new Set(displays).size).toBe(3);
    const xvfb = await ok("computer_exec", { ...first, argv: ["pgrep", "-c", "-x", "Xvfb"] });
    expect(xvfb.stdout.trim()).toBe("3");

    await ok("computer_destroy", first);
    expect(await stack.leftovers()).toEqual({ containers: [], liveComputers: [], keys: [] });
  }, 300_000);

  it("default mode: one computer per conversation, even within one Team", async () => {
    const a = await ok("computer_create", { scope: { conversationId: "solo-a", teamRoot: team } });
    const b = await ok("computer_create", { scope: { conversationId: "solo-b", teamRoot: team } });
    expect(a.computerId).not.toBe(b.computerId);
    // share without a Team root is refused, never guessed.
    const refused = await stack.bridge("computer_create", {
      scope: { conversationId: "solo-c", share: true },
    });
    expect(refused.status).toBe(400);
    for (const h of [a, b])
      await ok("computer_destroy", { computerId: h.computerId, capability: h.capability });
    expect(await stack.leftovers()).toEqual({ containers: [], liveComputers: [], keys: [] });
  }, 300_000);
});
