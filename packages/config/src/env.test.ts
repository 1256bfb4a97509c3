// First-run trap (issue 11): `.env.example` copied to `.env` as is must be a valid environment;
// its blank values (AGENT_MODEL_VISION=, BROWSER_PROVIDER=, …) mean "unset", not "invalid".
import { readFileSync } from "node:fs";
import { parseEnv } from "node:util";
import { describe, expect, it } from "vitest";
import { DEFAULT_DATA_DIR, parseRuntimeEnv } from "./env.ts";

const example = parseEnv(readFileSync(new URL("../../../.env.example", import.meta.url), "utf8"));

describe("runtime environment", () => {
  it(".env.example parses as is, blank values taking their defaults", () => {
    const env = parseRuntimeEnv(example);
    expect(env.AGENT_MODEL_VISION).toBeUndefined();
    expect(env.BROWSER_PROVIDER).toBeUndefined();
    expect(env.DATA_DIR).toBe(DEFAULT_DATA_DIR);
    expect(env.API_PORT).toBe(8787);
  });

  it("a blank port is unset (its default), not port 0", () => {
    expect(parseRuntimeEnv({ API_PORT: "", WEB_PORT: " " })).toMatchObject({
      API_PORT: 8787,
      WEB_PORT: 8788,
    });
  });

  it("a wrong value still names the variable", () => {
    expect(() => parseRuntimeEnv({ BROWSER_PROVIDER: "chrome" })).toThrow(/BROWSER_PROVIDER/);
  });
});
