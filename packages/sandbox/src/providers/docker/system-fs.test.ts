import { describe, expect, it } from "vitest";
import { containerCreateOptions, hostPaths } from "./container-spec.ts";
import { scratchTmpfs } from "./system-fs.ts";

const GIB = 1024 ** 3;
const MIB = 1024 ** 2;

describe("the computer's system filesystem", () => {
  it("is read-only, with scratch as tmpfs", () => {
    const options = containerCreateOptions({
      image: "img",
      computerId: "cmp_1",
      homeKey: "home-1",
      paths: hostPaths("/data", "cmp_1", "home-1"),
      labelPrefix: "rakazo",
      memoryBytes: 4 * GIB,
      pidsLimit: 100,
    });
    expect(options.HostConfig?.ReadonlyRootfs).toBe(true);
    expect(Object.keys(options.HostConfig?.Tmpfs ?? {}).sort()).toEqual([
      "/home/user",
      "/run/lock",
      "/tmp",
      "/var/tmp",
    ]);
  });

  it("sizes scratch from the computer's memory, so together it never holds more than half of it", () => {
    const sizes = (memory: number) =>
      Object.fromEntries(
        Object.entries(scratchTmpfs(memory, { uid: 1000, gid: 1000 })).map(([path, options]) => [
          path,
          Number(/size=(\d+)/.exec(options)?.[1]),
        ]),
      );
    expect(sizes(4 * GIB)).toEqual({
      "/tmp": GIB,
      "/var/tmp": 512 * MIB,
      "/home/user": 512 * MIB,
      "/run/lock": MIB,
    });
    const small = sizes(512 * MIB);
    expect(small["/tmp"]).toBe(128 * MIB);
    expect(Object.values(sizes(8 * GIB)).reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(4 * GIB + MIB);
    for (const options of Object.values(scratchTmpfs(GIB, { uid: 1000, gid: 1000 }))) {
      expect(options).toMatch(/(^|,)nosuid(,|$)/);
      expect(options).toMatch(/(^|,)nodev(,|$)/);
    }
    expect(scratchTmpfs(GIB, { uid: 1000, gid: 1000 })["/home/user"]).toContain("uid=1000,gid=1000");
  });
});
