import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parseEgressRules } from "./rules-env.ts";

const valid = {
  mode: "allowlist",
  allow: [{ host: "example.com" }, { host: "*.example.org", ports: [8443] }],
  privateAllow: ["10.0.0.0/8"],
  hostDeny: ["192.0.2.1"],
};

describe("the egress proxy's rules from its environment", () => {
  it("accepts the rules the Docker provider writes", () => {
    expect(parseEgressRules(JSON.stringify(valid))).toEqual(valid);
    expect(parseEgressRules(JSON.stringify({ ...valid, mode: "egress", allow: [] }))).not.toBeInstanceOf(
      Error,
    );
  });

  it.each([
    [undefined, "is not set"],
    ["", "is not set"],
    ["{", "is not JSON"],
    ["[]", "is not an object"],
    [JSON.stringify({ ...valid, mode: "open" }), ".mode must be"],
    [JSON.stringify({ ...valid, privateAllow: "10.0.0.0/8" }), ".privateAllow must be a list of strings"],
    [JSON.stringify({ ...valid, hostDeny: undefined }), ".hostDeny must be a list of strings"],
    [JSON.stringify({ ...valid, allow: {} }), ".allow must be a list"],
    [JSON.stringify({ ...valid, allow: [{ host: "" }] }), ".allow[0].host must be"],
    [JSON.stringify({ ...valid, allow: [{ host: "a.test", ports: [0] }] }), ".allow[0].ports must be"],
    [JSON.stringify({ ...valid, allow: [{ host: "a.test", ports: ["443"] }] }), ".allow[0].ports must be"],
  ])("refuses %j, saying what is wrong", (text, message) => {
    const result = parseEgressRules(text);
    expect(result).toBeInstanceOf(Error);
    expect((result as Error).message).toContain(message);
  });

  it("the proxy's entry refuses to start on them: exit 2 and the reason, before any socket", () => {
    const main = fileURLToPath(new URL("./main.ts", import.meta.url));
    const run = spawnSync(process.execPath, [main], {
      env: {
        PATH: process.env.PATH,
        RAKAZO_EGRESS_SOCKET: "/nonexistent/proxy.sock",
        RAKAZO_EGRESS_RULES: "{",
      },
      encoding: "utf8",
      timeout: 10_000,
    });
    expect(run.status).toBe(2);
    expect(JSON.parse(run.stderr.trim())).toEqual({
      event: "egress.refused_to_start",
      error: "RAKAZO_EGRESS_RULES is not JSON",
    });
  });
});
