// A terminal gets readable lines; files and pipes get the JSON lines unchanged.
import { describe, expect, it } from "vitest";
import { createConsole, readableLine } from "./console.ts";

const record = JSON.stringify({
  time: "2026-01-02T03:04:05.678Z",
  level: "warn",
  msg: "launcher.child_restarting",
  service: "launcher",
  child: "worker",
  inMs: 500,
  reason: "two words",
});

function stream(tty: boolean) {
  const written: string[] = [];
  return {
    written,
    stream: { isTTY: tty, write: (s: string) => written.push(s) } as unknown as NodeJS.WriteStream,
  };
}

describe("console", () => {
  it("renders a JSON record as one readable line", () => {
    expect(readableLine(record, false)).toBe(
      '03:04:05 launcher WARN launcher.child_restarting  child=worker inMs=500 reason="two words"',
    );
  });

  it("passes anything that is not a record through", () => {
    expect(readableLine("plain text", false)).toBe("plain text");
    expect(readableLine("[1,2]", false)).toBe("[1,2]");
  });

  it("a terminal gets readable lines and the banner; a pipe gets the JSON line only", () => {
    const tty = stream(true);
    createConsole(tty.stream).log(record);
    createConsole(tty.stream).say("ready");
    expect(tty.written[0]).toContain("launcher.child_restarting  child=worker");
    expect(tty.written[0]).not.toContain("{");
    expect(tty.written[1]).toBe("ready\n");
    const pipe = stream(false);
    createConsole(pipe.stream).log(record);
    createConsole(pipe.stream).say("ready");
    expect(pipe.written).toEqual([`${record}\n`]);
  });
});
