import { describe, expect, it } from "vitest";
import { evictionOrder, parseScreenLimit, planAllocation, type SlotView } from "./slot-table.ts";

const slot = (index: number, patch: Partial<SlotView> = {}): SlotView => ({
  index,
  generation: 1,
  state: "running",
  botId: `bot-${index}`,
  lastUsedAt: 1000 + index,
  controlled: false,
  busy: 0,
  ...patch,
});

describe("planAllocation", () => {
  it("starts the first desktop in slot 0, generation 1", () => {
    expect(planAllocation([], 0)).toEqual({ kind: "use", index: 0, generation: 1 });
  });

  it("has no cap when the limit is 0: 120 desktops still get a new slot", () => {
    const slots = Array.from({ length: 120 }, (_, i) => slot(i));
    expect(planAllocation(slots, 0)).toEqual({ kind: "use", index: 120, generation: 1 });
  });

  it("reuses the lowest free slot with the next generation", () => {
    const slots = [
      slot(0),
      slot(1, { state: "free", botId: null, generation: 4 }),
      slot(2, { state: "free", botId: null, generation: 1 }),
    ];
    expect(planAllocation(slots, 0)).toEqual({ kind: "use", index: 1, generation: 5 });
  });

  it("under the cap allocates without evicting", () => {
    expect(planAllocation([slot(0)], 2)).toEqual({ kind: "use", index: 1, generation: 1 });
  });

  it("at the cap evicts the oldest idle uncontrolled desktop", () => {
    const slots = [slot(0, { lastUsedAt: 300 }), slot(1, { lastUsedAt: 100 }), slot(2, { lastUsedAt: 200 })];
    expect(planAllocation(slots, 3)).toEqual({ kind: "evict", index: 1 });
  });

  it("never evicts a controlled or busy desktop", () => {
    const slots = [
      slot(0, { lastUsedAt: 100, controlled: true }),
      slot(1, { lastUsedAt: 200, busy: 1 }),
      slot(2, { lastUsedAt: 300 }),
    ];
    expect(planAllocation(slots, 3)).toEqual({ kind: "evict", index: 2 });
  });

  it("fails with unavailable when every desktop at the cap is controlled", () => {
    const slots = [slot(0, { controlled: true }), slot(1, { controlled: true })];
    expect(planAllocation(slots, 2)).toEqual({ kind: "unavailable", active: 2, limit: 2 });
  });

  it("counts a teardown_failed slot against the cap and never reuses it", () => {
    const slots = [slot(0, { state: "teardown_failed", controlled: false })];
    expect(planAllocation(slots, 1)).toEqual({ kind: "unavailable", active: 1, limit: 1 });
    expect(planAllocation(slots, 0)).toEqual({ kind: "use", index: 1, generation: 1 });
  });

  it("does not evict desktops that are still starting or stopping", () => {
    const slots = [
      slot(0, { state: "starting", lastUsedAt: 1 }),
      slot(1, { state: "stopping", lastUsedAt: 2 }),
    ];
    expect(planAllocation(slots, 2).kind).toBe("unavailable");
  });
});

describe("evictionOrder", () => {
  it("orders by least recent use, then index", () => {
    const slots = [
      slot(0, { lastUsedAt: 5 }),
      slot(1, { lastUsedAt: 1 }),
      slot(2, { lastUsedAt: 1 }),
      slot(3, { controlled: true, lastUsedAt: 0 }),
    ];
    expect(evictionOrder(slots).map((s) => s.index)).toEqual([1, 2, 0]);
  });
});

describe("parseScreenLimit", () => {
  it.each([
    [undefined, 0],
    ["", 0],
    ["0", 0],
    ["3", 3],
    ["-2", 0],
    ["2.5", 0],
    ["abc", 0],
  ])("%j -> %d", (raw, expected) => {
    expect(parseScreenLimit(raw)).toBe(expected);
  });
});
