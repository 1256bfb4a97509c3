// First-run trap: `.env.example` copied to `.env` as is must be a valid environment;
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

  it("WEB_PUBLIC_URL is an http(s) URL: the web app's origin and cookie follow from it", () => {
    expect(parseWebEnv({ WEB_PUBLIC_URL: "https://rakazo.example" }).WEB_PUBLIC_URL).toBe(
      "https://rakazo.example",
    );
    expect(() => parseWebEnv({ WEB_PUBLIC_URL: "rakazo.example" })).toThrow(/WEB_PUBLIC_URL/);
    expect(() => parseWebEnv({ WEB_PUBLIC_URL: "ftp://rakazo.example" })).toThrow(/WEB_PUBLIC_URL/);
  });
});

describe("each app parses its own slice", () => {
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

  it("docker: computers under runc unless RAKAZO_DOCKER_RUNTIME names another OCI runtime", () => {
    const docker = (env: Record<string, string>) =>
      providerSettings(parseWorkerEnv({ RAKAZO_PROVIDER: "docker", DATA_DIR: "/srv/rakazo", ...env }));
    expect(docker({})).toMatchObject({ runtime: "runc" });
    expect(docker({ RAKAZO_DOCKER_RUNTIME: "" })).toMatchObject({ runtime: "runc" });
    expect(docker({ RAKAZO_DOCKER_RUNTIME: "runsc" })).toMatchObject({ runtime: "runsc" });
    expect(() => docker({ RAKAZO_DOCKER_RUNTIME: "runsc --debug" })).toThrow(/RAKAZO_DOCKER_RUNTIME/);
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

describe("desktop admission (CMP-5): RAKAZO_DESKTOP_* reach every supervised provider", () => {
  const admission = {
    RAKAZO_DESKTOP_MEMORY_MIB: "320",
    RAKAZO_DESKTOP_PIDS: "90",
    RAKAZO_DESKTOP_FLOOR_MEMORY_MIB: "64",
    RAKAZO_DESKTOP_FLOOR_PIDS: "32",
    RAKAZO_DESKTOP_CPU_PRESSURE_MAX: "70",
  };
  const expected = { memoryMib: 320, pids: 90, floorMemoryMib: 64, floorPids: 32, cpuPressureMax: 70 };

  it.each([
    ["docker", {}],
    ["e2b", { E2B_API_KEY: "k" }],
    ["novita", { NOVITA_API_KEY: "k" }],
    ["daytona", { DAYTONA_API_KEY: "k" }],
    ["boat", { BOAT_API_KEY: "k" }],
  ])("%s carries them; unset ones are left to the supervisor's defaults", (kind, key) => {
    const env = parseWorkerEnv({ RAKAZO_PROVIDER: kind, ...key, ...admission });
    expect(providerSettings(env)).toMatchObject({ desktopAdmission: expected });
    const one = parseApiEnv({ RAKAZO_PROVIDER: kind, ...key, RAKAZO_DESKTOP_PIDS: "0" });
    expect(providerSettings(one)).toHaveProperty("desktopAdmission", { pids: 0 });
    expect(providerSettings(parseApiEnv({ RAKAZO_PROVIDER: kind, ...key }))).not.toHaveProperty(
      "desktopAdmission",
    );
  });

  it("bad values are refused, naming the variable", () => {
    expect(() => parseApiEnv({ RAKAZO_DESKTOP_MEMORY_MIB: "0" })).toThrow(/RAKAZO_DESKTOP_MEMORY_MIB/);
    expect(() => parseApiEnv({ RAKAZO_DESKTOP_PIDS: "-1" })).toThrow(/RAKAZO_DESKTOP_PIDS/);
    expect(() => parseWorkerEnv({ RAKAZO_DESKTOP_FLOOR_MEMORY_MIB: "1.5" })).toThrow(
      /RAKAZO_DESKTOP_FLOOR_MEMORY_MIB/,
    );
    expect(() => parseRuntimeEnv({ RAKAZO_DESKTOP_CPU_PRESSURE_MAX: "101" })).toThrow(
      /RAKAZO_DESKTOP_CPU_PRESSURE_MAX/,
    );
  });
});

describe("cloud providers (RAKAZO_PROVIDER=e2b|novita|daytona|boat)", () => {
  const base = { DATA_DIR: "/srv/rakazo", SANDBOX_TEAM_SCREEN_LIMIT: "2" };

  it("e2b: key, emulator URLs, template and TTL reach the adapter's options", () => {
    const env = parseWorkerEnv({
      ...base,
      RAKAZO_PROVIDER: "e2b",
      E2B_API_KEY: "e2b_k",
      E2B_API_URL: "http://127.0.0.1:4100",
      E2B_SANDBOX_URL: "http://127.0.0.1:4100",
      E2B_DOMAIN: "e2b.local",
      E2B_PORT_URL: "http://127.0.0.1:4100/hosts/{host}",
      E2B_TEMPLATE: "rakazo-desktop",
      E2B_TTL_SECONDS: "900",
      E2B_ON_TIMEOUT: "kill",
    });
    expect(providerSettings(env)).toEqual({
      kind: "e2b",
      apiKey: "e2b_k",
      supervisorBundlePath: "/srv/rakazo/remote/supervisor.mjs",
      screenLimit: 2,
      apiUrl: "http://127.0.0.1:4100",
      sandboxUrl: "http://127.0.0.1:4100",
      domain: "e2b.local",
      portUrlTemplate: "http://127.0.0.1:4100/hosts/{host}",
      template: "rakazo-desktop",
      ttlMs: 900_000,
      onTimeout: "kill",
    });
  });

  it("novita: only the key is needed; unset options keep the adapter's defaults", () => {
    const env = parseApiEnv({ ...base, RAKAZO_PROVIDER: "novita", NOVITA_API_KEY: "nk" });
    expect(providerSettings(env)).toEqual({
      kind: "novita",
      apiKey: "nk",
      supervisorBundlePath: "/srv/rakazo/remote/supervisor.mjs",
      screenLimit: 2,
    });
  });

  it("daytona: snapshot, target, archive interval and lifecycle timeout", () => {
    const env = parseWorkerEnv({
      ...base,
      RAKAZO_PROVIDER: "daytona",
      DAYTONA_API_KEY: "dtn_k",
      DAYTONA_API_URL: "http://127.0.0.1:4200/api",
      DAYTONA_TARGET: "eu",
      DAYTONA_SNAPSHOT: "rakazo-computer-7",
      DAYTONA_AUTO_ARCHIVE_MINUTES: "0",
      DAYTONA_LIFECYCLE_TIMEOUT_SECONDS: "300",
      RAKAZO_REMOTE_SUPERVISOR: "/opt/s/supervisor.mjs",
      RAKAZO_REMOTE_SUPERVISOR_IN_IMAGE: "/opt/rakazo/supervisor.mjs",
    });
    expect(providerSettings(env)).toEqual({
      kind: "daytona",
      apiKey: "dtn_k",
      supervisorBundlePath: "/opt/s/supervisor.mjs",
      supervisorInImage: "/opt/rakazo/supervisor.mjs",
      screenLimit: 2,
      apiUrl: "http://127.0.0.1:4200/api",
      target: "eu",
      snapshot: "rakazo-computer-7",
      autoArchiveMinutes: 0,
      lifecycleTimeoutSeconds: 300,
    });
  });

  it("the template's supervisor path must be absolute", () => {
    expect(() =>
      parseWorkerEnv({
        ...base,
        RAKAZO_PROVIDER: "daytona",
        DAYTONA_API_KEY: "dtn_k",
        RAKAZO_REMOTE_SUPERVISOR_IN_IMAGE: "opt/rakazo/supervisor.mjs",
      }),
    ).toThrow(/RAKAZO_REMOTE_SUPERVISOR_IN_IMAGE/);
  });

  it("boat: machine type and TTL", () => {
    const env = parseApiEnv({
      ...base,
      RAKAZO_PROVIDER: "boat",
      BOAT_API_KEY: "bk",
      BOAT_API_URL: "http://127.0.0.1:4300/api/v1",
      BOAT_TYPE: "large",
      BOAT_TTL_SECONDS: "3600",
    });
    expect(providerSettings(env)).toMatchObject({
      kind: "boat",
      apiKey: "bk",
      apiUrl: "http://127.0.0.1:4300/api/v1",
      type: "large",
      ttlSeconds: 3600,
    });
  });

  it.each([
    ["e2b", "E2B_API_KEY"],
    ["novita", "NOVITA_API_KEY"],
    ["daytona", "DAYTONA_API_KEY"],
    ["boat", "BOAT_API_KEY"],
  ])("%s without its key is refused, naming %s, in every slice that builds a provider", (kind, variable) => {
    const env = { RAKAZO_PROVIDER: kind, [variable]: " " };
    const naming = new RegExp(`${variable}: RAKAZO_PROVIDER=${kind} needs ${variable}`);
    expect(() => parseApiEnv(env)).toThrow(naming);
    expect(() => parseWorkerEnv(env)).toThrow(naming);
    expect(() => parseRuntimeEnv(env)).toThrow(naming);
    // The web process builds no provider: it neither needs nor sees a key.
    expect(() => parseWebEnv(env)).not.toThrow();
    expect(parseWebEnv({ ...env, [variable]: "k" })).not.toHaveProperty(variable);
  });

  it("another provider's key does not stand in for the selected one's", () => {
    expect(() => parseApiEnv({ RAKAZO_PROVIDER: "boat", E2B_API_KEY: "k" })).toThrow(/BOAT_API_KEY/);
  });

  it("an unknown kind is refused, naming the variable", () => {
    expect(() => parseApiEnv({ RAKAZO_PROVIDER: "modal" })).toThrow(/RAKAZO_PROVIDER/);
    expect(() => parseRuntimeEnv({ RAKAZO_PROVIDER: "E2B" })).toThrow(/RAKAZO_PROVIDER/);
  });

  it("bad options name their variable", () => {
    const ok = { RAKAZO_PROVIDER: "e2b", E2B_API_KEY: "k" };
    expect(() => parseApiEnv({ ...ok, E2B_API_URL: "not a url" })).toThrow(/E2B_API_URL/);
    expect(() => parseApiEnv({ ...ok, E2B_ON_TIMEOUT: "stop" })).toThrow(/E2B_ON_TIMEOUT/);
    expect(() => parseApiEnv({ ...ok, BOAT_TYPE: "huge" })).toThrow(/BOAT_TYPE/);
    expect(() => parseApiEnv({ ...ok, DAYTONA_LIFECYCLE_TIMEOUT_SECONDS: "0" })).toThrow(
      /DAYTONA_LIFECYCLE_TIMEOUT_SECONDS/,
    );
  });
});
