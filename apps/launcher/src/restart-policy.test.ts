import { describe, expect, it } from "vitest";
import { decideRestart, type RestartPolicy } from "./restart-policy.ts";

const policy: RestartPolicy = { firstDelayMs: 500, maxDelayMs: 2_000, windowMs: 60_000, maxCrashes: 4 };

describe("restart policy", () => {
  it("backs off, doubling per crash in the window, capped", () => {
    const crashes: number[] = [];
    expect(decideRestart(crashes, 0, policy)).toEqual({ restart: true, delayMs: 500, crashesInWindow: 1 });
    expect(decideRestart(crashes, 1_000, policy)).toEqual({
      restart: true,
      delayMs: 1_000,
      crashesInWindow: 2,
    });
    expect(decideRestart(crashes, 2_000, policy)).toEqual({
      restart: true,
      delayMs: 2_000,
      crashesInWindow: 3,
    });
  });

  it("gives up on the Nth crash inside the window", () => {
    const crashes: number[] = [];
    for (const t of [0, 1_000, 2_000]) decideRestart(crashes, t, policy);
    expect(decideRestart(crashes, 3_000, policy)).toEqual({ restart: false, crashesInWindow: 4 });
  });

  it("forgets crashes older than the window", () => {
    const crashes: number[] = [];
    for (const t of [0, 1_000, 2_000]) decideRestart(crashes, t, policy);
    expect(decideRestart(crashes, 61_500, policy)).toEqual({
      restart: true,
      delayMs: 1_000,
      crashesInWindow: 2,
    });
  });
});
