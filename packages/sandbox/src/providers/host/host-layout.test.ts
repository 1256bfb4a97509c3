import { describe, expect, it } from "vitest";
import { isSandboxError } from "../../errors.ts";
import {
  blockCount,
  blockDisplayBase,
  COMPUTER_MARKER,
  computerEnv,
  environHasMarker,
  launcherArgv,
  machinePaths,
  makeRef,
  nsenterArgv,
  requestEnv,
  slugOfRef,
  supervisorArgv,
  unshareArgv,
} from "./host-layout.ts";

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
    return undefined;
  } catch (error) {
    return isSandboxError(error) ? error.code : String(error);
  }
}

describe("host provider layout (PRV-6)", () => {
  it("refs name one machine of one computer; anything else is not a host ref (then: missing)", () => {
    const ref = makeRef("0123456789ab", "a1b2c3d4e5f6");
    expect(ref).toBe("host-0123456789ab-a1b2c3d4e5f6");
    expect(slugOfRef(ref)).toBe("0123456789ab");
    for (const other of ["", "0123456789ab", "host-../../etc-a1b2c3d4e5f6", `${ref}/x`, "docker-abc"]) {
      expect(slugOfRef(other)).toBeNull();
    }
  });

  it("keeps home keys to one path segment under homes/", () => {
    expect(machinePaths("/data", "0123456789ab", "cmp_1").homeDir).toBe("/data/homes/cmp_1");
    for (const key of ["..", "../x", "a/b", ".hidden", ""]) {
      expect(codeOf(() => machinePaths("/data", "0123456789ab", key))).toBe("INVALID_PATH");
    }
  });

  it("gives each computer a disjoint block of displays inside the configured range", () => {
    const range = { base: 1000, count: 10, perComputer: 4 };
    expect(blockCount(range)).toBe(2);
    expect([blockDisplayBase(range, 0), blockDisplayBase(range, 1)]).toEqual([1000, 1004]);
    expect(codeOf(() => blockDisplayBase(range, 2))).toBe("SANDBOX_PROVIDER_ERROR");
    const argv = supervisorArgv({
      bundle: "/b/supervisor.mjs",
      nodePath: "/usr/bin/node",
      supervisorRunDir: "/r/computer",
      workspace: "/h",
      displayBase: 1004,
      screenLimit: 4,
      logDir: "/r/logs",
    });
    expect(argv).toContain("--display-base=1004");
    expect(argv).toContain("--screen-limit=4");
    // The host's cgroup is not the computer's: admission by the cap alone.
    expect(argv).toContain("--cgroup-root=off");
  });

  it("builds the computer's environment from nothing of the host process's", () => {
    process.env.RAKAZO_LAYOUT_TEST_SECRET = "x";
    try {
      const env = computerEnv({ workspace: "/h", slug: "abc", user: "dev", nodeBin: "/opt/node/bin" });
      expect(env.RAKAZO_LAYOUT_TEST_SECRET).toBeUndefined();
      expect(env.HOME).toBe("/h");
      expect(env[COMPUTER_MARKER]).toBe("abc");
      expect(env.PATH?.split(":").slice(0, 2)).toEqual(["/h/.local/bin", "/opt/node/bin"]);
    } finally {
      delete process.env.RAKAZO_LAYOUT_TEST_SECRET;
    }
  });

  it("lets no command choose its computer's marker or pass a malformed variable", () => {
    expect(requestEnv({ A: "1", [COMPUTER_MARKER]: "other" })).toEqual({ A: "1" });
    const bad: Record<string, string>[] = [{ "A=B": "1" }, { "": "1" }, { A: "x\0y" }];
    for (const env of bad) {
      expect(codeOf(() => requestEnv(env))).toBe("SANDBOX_PROVIDER_ERROR");
    }
  });

  it("finds the marker only as a whole variable", () => {
    const environ = (vars: string[]) => Buffer.from(`${vars.join("\0")}\0`);
    expect(environHasMarker(environ([`${COMPUTER_MARKER}=abc`, "A=1"]), "abc")).toBe(true);
    expect(environHasMarker(environ(["A=1", `${COMPUTER_MARKER}=abc`]), "abc")).toBe(true);
    expect(environHasMarker(environ([`${COMPUTER_MARKER}=abcd`]), "abc")).toBe(false);
    expect(environHasMarker(environ([`X${COMPUTER_MARKER}=abc`]), "abc")).toBe(false);
  });

  it("never hands argv to a shell; enters the supervisor's network namespace by pid", () => {
    expect(launcherArgv(["echo", "$(reboot)"], "/h")).toEqual([
      "/bin/sh",
      "-c",
      'cd -- "$1" || exit 1; shift; exec "$@"',
      "rakazo-exec",
      "/h",
      "echo",
      "$(reboot)",
    ]);
    expect(nsenterArgv(true, 42)).toEqual(["nsenter", "--net=/proc/42/ns/net", "--"]);
    expect(nsenterArgv(false, 42)).toContain("--user=/proc/42/ns/user");
    expect(codeOf(() => nsenterArgv(true, 1))).toBe("SANDBOX_PROVIDER_ERROR");
    expect(unshareArgv(true).slice(0, 3)).toEqual(["unshare", "--net", "--"]);
    expect(unshareArgv(false)).toContain("--map-root-user");
  });
});
