// First-run trap (issue 11): `.env.example` copied to `.env` as is must be a valid environment;
// its blank values (AGENT_MODEL_VISION=, BROWSER_PROVIDER=, …) mean "unset", not "invalid".
import { readFileSync } from "node:fs";
import { parseEnv } from "node:util";
import { describe, expect, it } from "vitest";
import { DEFAULT_DATA_DIR, parseApiEnv, parseRuntimeEnv, parseWebEnv, parseWorkerEnv } from "./env.ts";
import { providerSettings } from "./provider.ts";

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

describe("each app parses its own slice (issue 13)", () => {
  it("a bad value of another app's variable does not stop an app", () => {
    // BROWSER_PROVIDER belongs to the worker, SCREEN_URL_MAX_TTL_SECONDS to the API.
    expect(() => parseApiEnv({ BROWSER_PROVIDER: "chrome" })).not.toThrow();
    expect(() => parseWorkerEnv({ SCREEN_URL_MAX_TTL_SECONDS: "1" })).not.toThrow();
    expect(() => parseWebEnv({ RAKAZO_PROVIDER: "cloud" })).not.toThrow();
    expect(() => parseWorkerEnv({ BROWSER_PROVIDER: "chrome" })).toThrow(/BROWSER_PROVIDER/);
    expect(() => parseApiEnv({ SCREEN_URL_MAX_TTL_SECONDS: "1" })).toThrow(/SCREEN_URL_MAX_TTL_SECONDS/);
  });

  it("a slice holds only its variables", () => {
    expect(parseWebEnv(example)).not.toHaveProperty("DATABASE_URL");
    expect(parseApiEnv(example)).not.toHaveProperty("WORKER_POLL_SECONDS");
    expect(parseWorkerEnv(example)).not.toHaveProperty("SCREEN_CAPABILITY_KEYS");
  });
});

describe("provider settings", () => {
  it("an unresolved auto fails, naming what is missing, instead of becoming fake", () => {
    const env = parseApiEnv({ RAKAZO_PROVIDER: "auto" });
    expect(() => providerSettings(env)).toThrow(/RAKAZO_PROVIDER=auto is unresolved.*RAKAZO_PROVIDER=docker/);
  });

  it("a concrete kind gives that kind's options", () => {
    const env = parseWorkerEnv({ RAKAZO_PROVIDER: "docker", DATA_DIR: "/srv/rakazo" });
    expect(providerSettings(env)).toMatchObject({ kind: "docker", dataDir: "/srv/rakazo" });
    expect(providerSettings(env, "fake")).toEqual({
      kind: "fake",
      rootDir: "/srv/rakazo/fake-computers",
      screenLimit: 0,
    });
  });

  it("host (PRV-6): the staged supervisor in DATA_DIR and the display range it owns", () => {
    const env = parseApiEnv({
      RAKAZO_PROVIDER: "host",
      DATA_DIR: "/srv/rakazo",
      SANDBOX_TEAM_SCREEN_LIMIT: "3",
    });
    expect(providerSettings(env)).toEqual({
      kind: "host",
      dataDir: "/srv/rakazo",
      supervisorBundle: "/srv/rakazo/host/supervisor.mjs",
      screenLimit: 3,
      displayBase: 1100,
      displayCount: 400,
    });
    const own = parseApiEnv({
      RAKAZO_PROVIDER: "host",
      RAKAZO_HOST_SUPERVISOR: "/opt/s/supervisor.mjs",
      RAKAZO_HOST_DISPLAY_BASE: "2000",
      RAKAZO_HOST_DISPLAY_COUNT: "8",
    });
    expect(providerSettings(own)).toMatchObject({
      supervisorBundle: "/opt/s/supervisor.mjs",
      displayBase: 2000,
      displayCount: 8,
    });
    expect(() => parseApiEnv({ RAKAZO_HOST_DISPLAY_COUNT: "0" })).toThrow(/RAKAZO_HOST_DISPLAY_COUNT/);
  });
});
