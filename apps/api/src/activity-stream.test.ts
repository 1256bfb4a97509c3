import { describe, expect, it } from "vitest";
import { enqueueRunEvent } from "./activity-stream.ts";

describe("the activity stream's queue of run events for a slow reader", () => {
  it("keeps at most the bound of run events, dropping the oldest, and never a command event", () => {
    const queue = [{ event: "computer.command", data: "cmd-1" }];
    for (let seq = 1; seq <= 100; seq += 1) enqueueRunEvent(queue, `run-${seq}`, 64);
    queue.push({ event: "computer.command", data: "cmd-2" });
    enqueueRunEvent(queue, "run-101", 64);
    const runs = queue.filter((e) => e.event === "run.event").map((e) => e.data);
    expect(runs).toHaveLength(64);
    expect(runs[0]).toBe("run-38");
    expect(runs.at(-1)).toBe("run-101");
    expect(queue.filter((e) => e.event === "computer.command").map((e) => e.data)).toEqual([
      "cmd-1",
      "cmd-2",
    ]);
  });

  it("drops nothing under the bound", () => {
    const queue: { event: string; data: string }[] = [];
    for (let seq = 1; seq <= 10; seq += 1) enqueueRunEvent(queue, `run-${seq}`);
    expect(queue.map((e) => e.data)).toEqual(Array.from({ length: 10 }, (_, i) => `run-${i + 1}`));
  });
});
