/** The lifecycle state machine against an in-memory launcher: no processes. */
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { MIB } from "./admission.ts";
import { DesktopSlots } from "./desktop-slots.ts";
import type { DesktopStack, StackLauncher } from "./desktop-stack.ts";
import type { StackPlan } from "./stack-argv.ts";

/** In-memory stacks; `failTeardowns` / `failScreens` make the next N teardowns / screen starts throw. */
function memoryLauncher() {
  const live = new Map<string, StackPlan>();
  const state = {
    failTeardowns: 0,
    failScreens: 0,
    started: [] as StackPlan[],
    browserCloses: 0,
    browserRevives: 0,
    screens: [] as string[],
  };
  const launcher: StackLauncher = {
    async start(plan) {
      live.set(plan.vncSocket, plan);
      state.started.push(plan);
      let browser = true;
      const stack: DesktopStack = {
        plan,
        closeBrowser: async () => {
          if (!browser) return false;
          browser = false;
          state.browserCloses += 1;
          return true;
        },
        reviveBrowser: async () => {
          if (browser) return false;
          browser = true;
          state.browserRevives += 1;
          return true;
        },
        capture: async () => ({
          png: Buffer.from(plan.profileDir),
          width: 1280,
          height: 800,
          frameHash: plan.vncSocket,
        }),
        runStep: async () => undefined,
        serveScreen: async () => {
          if (state.failScreens > 0) {
            state.failScreens -= 1;
            throw new Error("x11vnc: process exited (1)");
          }
          state.screens.push(plan.vncSocket);
        },
        teardown: async () => {
          if (state.failTeardowns > 0) {
            state.failTeardowns -= 1;
            throw new Error("x11vnc survived");
          }
          live.delete(plan.vncSocket);
        },
      };
      return stack;
    },
  };
  return { launcher, live, state };
}

function supervisor(screenLimit: number, runDir = mkdtempSync(path.join(os.tmpdir(), "sup-"))) {
  const memory = memoryLauncher();
  let clock = 0;
  const sup = new DesktopSlots({
    launcher: memory.launcher,
    workspace: "/ws",
    layout: { runDir, displayBase: 10, debugPortBase: 9300 },
    screenLimit,
    now: () => ++clock,
  });
  return { sup, ...memory, runDir };
}

describe("DesktopSlots", () => {
  it("starts lazily, keeps one desktop per bot, and bumps the generation on reuse", async () => {
    const { sup, state } = supervisor(0);
    expect(sup.list()).toEqual([]);
    const first = await sup.observe("a");
    await sup.observe("a");
    expect(state.started).toHaveLength(1);
    expect(first.slot).toEqual({ index: 0, generation: 1 });
    await sup.release("a");
    const again = await sup.observe("b");
    expect(again.slot).toEqual({ index: 0, generation: 2 });
    expect(state.started[1]?.vncSocket).not.toBe(state.started[0]?.vncSocket);
  });

  it("keys profiles by bot: a bot reopened in another slot gets the same profile", async () => {
    const { sup, state } = supervisor(0);
    await sup.observe("a");
    await sup.observe("b");
    await sup.release("a");
    await sup.release("b");
    await sup.observe("x"); // takes slot 0
    const reopened = await sup.observe("a"); // now slot 1
    expect(reopened.slot.index).toBe(1);
    expect(state.started.at(-1)?.profileDir).toBe(state.started[0]?.profileDir);
  });

  it("at the cap evicts the oldest idle uncontrolled desktop, and refuses when all are controlled", async () => {
    const { sup, live } = supervisor(2);
    await sup.observe("a");
    await sup.observe("b");
    sup.setControlled("b", true);
    await sup.observe("a"); // a is now most recent, but b is controlled
    await sup.observe("c"); // evicts a (the only uncontrolled)
    expect(
      sup
        .list()
        .map((s) => s.botId)
        .sort(),
    ).toEqual(["b", "c"]);
    expect(live.size).toBe(2);
    sup.setControlled("c", true);
    await expect(sup.observe("d")).rejects.toMatchObject({ code: "MULTI_SCREEN_UNAVAILABLE" });
    sup.setControlled("c", false);
    // c held slot 0 as generation 2 (after a); d takes it over as generation 3.
    await expect(sup.observe("d")).resolves.toMatchObject({ slot: { index: 0, generation: 3 } });
    expect(
      sup
        .list()
        .map((s) => s.botId)
        .sort(),
    ).toEqual(["b", "d"]);
  });

  it("keeps a slot whose teardown failed reserved and retries it on the next allocation", async () => {
    const { sup, state, live } = supervisor(1);
    await sup.observe("a");
    state.failTeardowns = 1;
    await expect(sup.release("a")).rejects.toMatchObject({ code: "DESKTOP_UNAVAILABLE" });
    expect(sup.list()).toMatchObject([{ botId: "a", state: "teardown_failed" }]);
    expect(sup.health().active).toBe(1);
    // The retry succeeds, the slot is freed and handed out with a new generation.
    const next = await sup.observe("b");
    expect(next.slot).toEqual({ index: 0, generation: 2 });
    expect([...live.keys()]).toEqual([next.slot && state.started[1]?.vncSocket]);
  });

  it("persists generations so a restarted daemon never reuses a socket path", async () => {
    const first = supervisor(0);
    await first.sup.observe("a");
    await first.sup.release("a");
    const restarted = supervisor(0, first.runDir);
    expect((await restarted.sup.observe("a")).slot).toEqual({ index: 0, generation: 2 });
  });

  it("reports the failing action's index and stops there", async () => {
    const { sup } = supervisor(0);
    const result = await sup.act("a", [
      { type: "wait", ms: 0 },
      { type: "key", keys: "rm -rf /" },
      { type: "wait", ms: 0 },
    ]);
    expect(result).toEqual({
      completed: 1,
      total: 3,
      error: { code: "INVALID_ACTION", message: expect.any(String), index: 1 },
    });
  });

  it("closeBrowser keeps the desktop: same slot and generation, no viewer closed, revived on next use", async () => {
    const { sup, state, live } = supervisor(0);
    const closing: number[] = [];
    sup.onSlotClosing((index) => closing.push(index));
    expect(await sup.closeBrowser("a")).toEqual({ closed: false }); // no desktop: nothing started
    expect(state.started).toHaveLength(0);
    const first = await sup.observe("a");
    expect(await sup.closeBrowser("a")).toEqual({ closed: true });
    expect(await sup.closeBrowser("a")).toEqual({ closed: false });
    expect(closing).toEqual([]);
    expect(live.size).toBe(1);
    expect(sup.list()).toMatchObject([{ botId: "a", state: "running", slot: first.slot }]);
    expect(state.browserRevives).toBe(0);
    expect((await sup.observe("a")).slot).toEqual(first.slot);
    expect(state).toMatchObject({ browserCloses: 1, browserRevives: 1 });
    expect(state.started).toHaveLength(1);
    await expect(sup.closeBrowser("")).rejects.toMatchObject({ code: "INVALID_ACTION" });
  });

  it("serves a running desktop's screen only for its current generation, and never starts a desktop for it", async () => {
    const { sup, state } = supervisor(0);
    await expect(sup.openScreen("a")).rejects.toMatchObject({ code: "DESKTOP_UNAVAILABLE" });
    await expect(sup.serveScreen(0, 1)).rejects.toMatchObject({ code: "DESKTOP_UNAVAILABLE" });
    expect(state.started).toHaveLength(0);
    const { slot } = await sup.observe("a");
    expect(state.screens).toEqual([]); // a desktop starts without its screen server
    const [info] = sup.list();
    await expect(sup.openScreen("a")).resolves.toEqual({ vncSocket: info?.vncSocket, slot });
    await expect(sup.serveScreen(slot.index, slot.generation + 1)).rejects.toMatchObject({
      code: "DESKTOP_UNAVAILABLE",
    });
    // A failed start is DESKTOP_UNAVAILABLE with the cause; the next call tries again.
    state.failScreens = 1;
    await expect(sup.serveScreen(slot.index, slot.generation)).rejects.toMatchObject({
      code: "DESKTOP_UNAVAILABLE",
      message: expect.stringContaining("process exited (1)"),
    });
    await expect(sup.serveScreen(slot.index, slot.generation)).resolves.toBe(info?.vncSocket);
    expect(state.screens).toEqual([info?.vncSocket, info?.vncSocket]);
    await sup.release("a");
    await expect(sup.serveScreen(slot.index, slot.generation)).rejects.toMatchObject({
      code: "DESKTOP_UNAVAILABLE",
    });
  });

  it("serialises concurrent first calls of one bot onto one desktop", async () => {
    const { sup, state } = supervisor(0);
    await Promise.all([sup.observe("a"), sup.observe("a"), sup.act("a", [])]);
    expect(state.started).toHaveLength(1);
  });
  it("admits by the cgroup: evicts an idle uncontrolled desktop, never a controlled one, then refuses with the reason", async () => {
    const memory = memoryLauncher();
    let clock = 0;
    // A computer with room for two desktops: each live stack costs 200 MiB of a 700 MiB cgroup.
    const sup = new DesktopSlots({
      launcher: memory.launcher,
      workspace: "/ws",
      layout: { runDir: mkdtempSync(path.join(os.tmpdir(), "sup-")), displayBase: 10, debugPortBase: 9300 },
      screenLimit: 0,
      now: () => ++clock,
      sampleCgroup: () => ({
        memoryUsed: 100 * MIB + memory.live.size * 200 * MIB,
        memoryMax: 700 * MIB,
        pidsCurrent: 10,
        pidsMax: 10_000,
        cpuPressure: null,
      }),
      admission: {
        desktop: { memoryBytes: 200 * MIB, pids: 10 },
        floor: { memoryBytes: 100 * MIB, pids: 10 },
        cpuPressureMax: 0,
      },
    });
    await sup.observe("a");
    await sup.observe("b");
    expect(sup.health()).toMatchObject({ live: 2, memory: { usedBytes: 500 * MIB, maxBytes: 700 * MIB } });
    sup.setControlled("b", true);
    await sup.observe("c"); // a is idle and uncontrolled: evicted
    expect(
      sup
        .list()
        .map((s) => s.botId)
        .sort(),
    ).toEqual(["b", "c"]);
    sup.setControlled("c", true);
    const started = Date.now();
    await expect(sup.observe("d")).rejects.toMatchObject({
      code: "MULTI_SCREEN_UNAVAILABLE",
      details: { reason: "memory", active: 2 },
    });
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(memory.live.size).toBe(2); // nothing controlled was torn down
  });
});
