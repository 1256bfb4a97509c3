// Under CI=true a suite that lacks a tool fails naming it; locally it skips saying
// why; RAKAZO_TEST_DOCKER=0 is the one skip CI accepts.
import { afterEach, describe, expect, it } from "vitest";
import { requireDocker, requireTools } from "./tools.ts";

const saved = { CI: process.env.CI, RAKAZO_TEST_DOCKER: process.env.RAKAZO_TEST_DOCKER };
afterEach(() => {
  for (const [key, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
});

describe("suite gates", () => {
  it("locally, a missing tool skips the suite and the title names it", () => {
    delete process.env.CI;
    const gate = requireTools("s", ["sh", "rakazo-no-such-tool", "/nonexistent/chromium"]);
    expect(gate).toEqual({
      skip: true,
      title:
        "s — skipped: missing rakazo-no-such-tool, /nonexistent/chromium (scripts/test-tools.sh installs them)",
    });
  });

  it("under CI=true a missing tool throws, naming it", () => {
    process.env.CI = "true";
    expect(() => requireTools("s", ["sh", "rakazo-no-such-tool"])).toThrow(
      /CI=true: suite "s" cannot run: missing rakazo-no-such-tool/,
    );
  });

  it("present tools run the suite under its own title", () => {
    process.env.CI = "true";
    expect(requireTools("s", ["sh", "/bin/sh"])).toEqual({ skip: false, title: "s" });
  });

  it("RAKAZO_TEST_DOCKER=0 opts Docker suites out even under CI=true", async () => {
    process.env.CI = "true";
    process.env.RAKAZO_TEST_DOCKER = "0";
    await expect(requireDocker("d", ["rakazo-no-such-tool"])).resolves.toEqual({
      skip: true,
      title: "d — opted out (RAKAZO_TEST_DOCKER=0)",
    });
  });
});
