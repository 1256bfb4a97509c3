// The home's disk size: a default and a maximum like memory, and Docker's home disks
// asked for unless RAKAZO_DOCKER_HOME_DISKS=off (auto by default).
import { describe, expect, it } from "vitest";
import { ConfigError, parseWorkerEnv } from "./env.ts";
import { providerSettings, sizingFromEnv } from "./provider.ts";

const docker = { RAKAZO_PROVIDER: "docker", DATA_DIR: "/srv/rakazo" };

describe("home disks", () => {
  it("sizes disks like memory: 10 GiB by default, at most 100 GiB, both configurable", () => {
    const sizing = sizingFromEnv(parseWorkerEnv(docker));
    expect(sizing.defaults.diskMib).toBe(10_240);
    expect(sizing.max.diskMib).toBe(102_400);
    const own = sizingFromEnv(
      parseWorkerEnv({ ...docker, RAKAZO_COMPUTER_DISK_MIB: "2048", RAKAZO_COMPUTER_MAX_DISK_MIB: "4096" }),
    );
    expect(own).toMatchObject({ defaults: { diskMib: 2048 }, max: { diskMib: 4096 } });
    expect(() =>
      sizingFromEnv(
        parseWorkerEnv({ ...docker, RAKAZO_COMPUTER_DISK_MIB: "8192", RAKAZO_COMPUTER_MAX_DISK_MIB: "4096" }),
      ),
    ).toThrow(ConfigError);
  });

  it("asks the Docker provider for disks by default (auto), at the default size; off and on as set", () => {
    expect(providerSettings(parseWorkerEnv(docker))).toMatchObject({
      kind: "docker",
      homeDisks: "auto",
      diskBytes: 10_240 * 1024 ** 2,
    });
    expect(
      providerSettings(parseWorkerEnv({ ...docker, RAKAZO_DOCKER_HOME_DISKS: "off" })),
    ).not.toHaveProperty("homeDisks");
    expect(
      providerSettings(
        parseWorkerEnv({ ...docker, RAKAZO_DOCKER_HOME_DISKS: "on", RAKAZO_COMPUTER_DISK_MIB: "2048" }),
      ),
    ).toMatchObject({ kind: "docker", homeDisks: "on", diskBytes: 2048 * 1024 ** 2 });
    expect(() => parseWorkerEnv({ ...docker, RAKAZO_DOCKER_HOME_DISKS: "yes" })).toThrow();
  });
});
