/** How a foreground command reads in the activity feed, for both exec RPCs. */
import { describe, expect, it } from "vitest";
import { execActivity } from "./define.ts";

describe("execActivity", () => {
  const base = { computerId: "cmp_1", command: "ls -la" };

  it("shows the exit, the output and whether the command passed", () => {
    const result = { exitCode: 2, stdout: "out", stderr: "err", timedOut: false };
    expect(execActivity(base, { ok: true, result })).toEqual({
      ...base,
      line: "$ ls -la → exit 2",
      exitCode: 2,
      output: "out",
      stderr: "err",
      ok: false,
    });
    expect(execActivity(base, { ok: true, result: { ...result, exitCode: 0, stderr: "" } })).toMatchObject({
      line: "$ ls -la → exit 0",
      output: "out",
      ok: true,
    });
  });

  it("marks a timed-out command failed, and a call that failed shows only its line", () => {
    const timedOut = { exitCode: 124, stdout: "", stderr: "", timedOut: true };
    expect(execActivity(base, { ok: true, result: timedOut })).toMatchObject({
      line: "$ ls -la → exit 124 (timed out)",
      ok: false,
    });
    expect(execActivity(base, { ok: false, error: new Error("gone") })).toEqual({
      ...base,
      line: "$ ls -la",
    });
  });
});
