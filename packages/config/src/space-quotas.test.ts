// Per-space quotas from the environment: finite defaults derived from the computer sizes, 0 for
// no limit, and a quota too small for one default-sized computer refused at start.
import { describe, expect, it } from "vitest";
import { ConfigError, parseApiEnv, parseWorkerEnv } from "./env.ts";
import { spaceQuotasFromEnv } from "./provider.ts";

describe("space quotas", () => {
  it("unset: 20 computers and eight default-sized computers' memory and CPUs", () => {
    expect(spaceQuotasFromEnv(parseApiEnv({}))).toEqual({ computers: 20, memoryMib: 32_768, cpus: 16 });
    expect(spaceQuotasFromEnv(parseWorkerEnv({}))).toEqual(spaceQuotasFromEnv(parseApiEnv({})));
  });

  it("follows the computer sizes, never below one computer of the maximum size", () => {
    const small = parseApiEnv({ RAKAZO_COMPUTER_MEMORY_MIB: "1024", RAKAZO_COMPUTER_CPUS: "0.5" });
    expect(spaceQuotasFromEnv(small)).toEqual({ computers: 20, memoryMib: 16_384, cpus: 4 });
  });

  it("takes set values; 0 is no limit", () => {
    const env = parseApiEnv({
      RAKAZO_SPACE_MAX_COMPUTERS: "5",
      RAKAZO_SPACE_MAX_MEMORY_MIB: "0",
      RAKAZO_SPACE_MAX_CPUS: "6.5",
    });
    expect(spaceQuotasFromEnv(env)).toEqual({ computers: 5, memoryMib: null, cpus: 6.5 });
  });

  it("refuses a quota below one default-sized computer, and names bad values", () => {
    expect(() => spaceQuotasFromEnv(parseApiEnv({ RAKAZO_SPACE_MAX_MEMORY_MIB: "2048" }))).toThrow(
      ConfigError,
    );
    expect(() => spaceQuotasFromEnv(parseApiEnv({ RAKAZO_SPACE_MAX_CPUS: "1" }))).toThrow(/cpus quota/);
    expect(() => parseApiEnv({ RAKAZO_SPACE_MAX_COMPUTERS: "-1" })).toThrow(/RAKAZO_SPACE_MAX_COMPUTERS/);
    expect(() => parseApiEnv({ RAKAZO_SPACE_MAX_COMPUTERS: "2.5" })).toThrow(/RAKAZO_SPACE_MAX_COMPUTERS/);
  });
});
