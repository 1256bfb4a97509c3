/** Pure builders of the Docker adapter; no Docker engine needed. */
import { describe, expect, it } from "vitest";
import { isSandboxError } from "../../errors.ts";
import { parseListing } from "../../listing.ts";
import {
  computerSlug,
  containerCreateOptions,
  containerName,
  DEFAULT_NANO_CPUS,
  hostPaths,
  RUNTIME_DIR,
  SHM_SIZE_BYTES,
  WORKSPACE_DIR,
} from "./container-spec.ts";
import { createDemuxer, envList, launcherArgv, mapDockerError } from "./docker-exec.ts";

const specInput = () => ({
  image: "rakazo-computer:test",
  computerId: "cmp_123",
  homeKey: "home_123",
  paths: hostPaths("/var/lib/rakazo", "cmp_123", "home_123"),
  labelPrefix: "rakazo",
  memoryBytes: 2 * 1024 ** 3,
  pidsLimit: 512,
});
const spec = () => containerCreateOptions(specInput());

describe("containerCreateOptions", () => {
  it("turns networking off", () => {
    const options = spec();
    expect(options.HostConfig?.NetworkMode).toBe("none");
    expect(options.NetworkDisabled).toBe(true);
    expect(options.HostConfig?.PortBindings).toBeUndefined();
    expect(options.ExposedPorts).toBeUndefined();
  });

  it("applies memory, pids and shm limits", () => {
    const host = spec().HostConfig;
    expect(host?.Memory).toBe(2 * 1024 ** 3);
    expect(host?.MemorySwap).toBe(2 * 1024 ** 3);
    // A CPU bound is always set, defaulted when the caller gives none.
    expect(host?.NanoCpus).toBe(DEFAULT_NANO_CPUS);
    expect(
      containerCreateOptions({ ...specInput(), nanoCpus: 500_000_000, memoryBytes: 1024 ** 3 }).HostConfig,
    ).toMatchObject({ NanoCpus: 500_000_000, Memory: 1024 ** 3, MemorySwap: 1024 ** 3 });
    expect(host?.PidsLimit).toBe(512);
    expect(host?.ShmSize).toBe(SHM_SIZE_BYTES);
    expect(SHM_SIZE_BYTES).toBeGreaterThanOrEqual(256 * 1024 ** 2);
  });

  it("runs under the configured OCI runtime, Docker's runc by default", () => {
    expect(spec().HostConfig?.Runtime).toBe("runc");
    expect(containerCreateOptions({ ...specInput(), runtime: "runsc" }).HostConfig?.Runtime).toBe("runsc");
  });

  it("runs as the workspace user without capabilities", () => {
    const options = spec();
    expect(options.User).toBe("1000:1000");
    expect(options.WorkingDir).toBe(WORKSPACE_DIR);
    expect(options.HostConfig?.CapDrop).toEqual(["ALL"]);
    expect(options.HostConfig?.SecurityOpt).toContain("no-new-privileges");
    expect(options.HostConfig?.Privileged).toBeUndefined();
  });

  it("bind-mounts the home as the workspace and the run dir's computer side, nothing else (PRV-5)", () => {
    const mounts = spec().HostConfig?.Mounts;
    expect(mounts).toEqual([
      { Type: "bind", Source: "/var/lib/rakazo/homes/home_123", Target: WORKSPACE_DIR, ReadOnly: false },
      {
        Type: "bind",
        // Only the `computer/` child: the run dir itself (where the host links sockets) is never mounted.
        Source: `/var/lib/rakazo/run/${computerSlug("cmp_123")}/computer`,
        Target: RUNTIME_DIR,
        ReadOnly: false,
      },
    ]);
    expect(spec().HostConfig?.Binds).toBeUndefined();
  });

  it("labels the container with its computer and home and names it after the computer", () => {
    const options = spec();
    expect(options.Labels).toEqual({
      "rakazo.computer": "cmp_123",
      "rakazo.home": "home_123",
      "rakazo.managed": "true",
    });
    expect(options.name).toBe(containerName("rakazo", "cmp_123"));
    expect(options.Image).toBe("rakazo-computer:test");
    expect(options.Cmd).toBeUndefined(); // the image's CMD: the supervisor daemon
  });

  it("uses a label prefix for labels and names, and a command override when given", () => {
    const options = containerCreateOptions({
      image: "img",
      computerId: "cmp_1",
      homeKey: "h",
      paths: hostPaths("/d", "cmp_1", "h"),
      labelPrefix: "rakazo-test",
      memoryBytes: 1,
      pidsLimit: 1,
      command: ["sleep", "infinity"],
    });
    expect(Object.keys(options.Labels ?? {})).toEqual([
      "rakazo-test.computer",
      "rakazo-test.home",
      "rakazo-test.managed",
    ]);
    expect(options.name).toMatch(/^rakazo-test-[0-9a-f]{12}$/);
    expect(options.Cmd).toEqual(["sleep", "infinity"]);
  });
});

describe("host paths", () => {
  it("keeps socket paths short whatever the computer id", () => {
    const id = `cmp_${"x".repeat(500)}`;
    const { runDir, computerRunDir } = hostPaths("/var/lib/rakazo", id, "h");
    expect(runDir).toBe(`/var/lib/rakazo/run/${computerSlug(id)}`);
    expect(computerRunDir).toBe(`${runDir}/computer`);
    expect(Buffer.byteLength(`${computerRunDir}/vnc/vnc-123-45.sock`)).toBeLessThan(80);
    expect(computerSlug(id)).not.toBe(computerSlug(`${id}y`));
  });

  it("refuses home keys that could leave homes/", () => {
    for (const bad of ["..", "../etc", "a/b", "", ".hidden", "a\0b", "x".repeat(200)]) {
      let error: unknown;
      try {
        hostPaths("/d", "cmp", bad);
      } catch (e) {
        error = e;
      }
      expect(isSandboxError(error, "INVALID_PATH"), bad).toBe(true);
    }
    expect(hostPaths("/d", "cmp", "cmp_abc-1.2").homeDir).toBe("/d/homes/cmp_abc-1.2");
  });
});

describe("exec builders", () => {
  it("passes argv as arguments to a fixed launcher, never as shell text", () => {
    const argv = launcherArgv(["echo", "$(rm -rf /)", "; ls"], "/home/user/rakazo-home/sub");
    expect(argv.slice(0, 5)).toEqual([
      "/bin/sh",
      "-c",
      'cd -- "$1" || exit 1; shift; exec "$@"',
      "rakazo-exec",
      "/home/user/rakazo-home/sub",
    ]);
    expect(argv.slice(5)).toEqual(["echo", "$(rm -rf /)", "; ls"]);
  });

  it("wraps a timed command in coreutils timeout with a KILL grace", () => {
    expect(launcherArgv(["sleep", "30"], "/w", 300).slice(5)).toEqual([
      "timeout",
      "-k",
      "2",
      "0.3s",
      "sleep",
      "30",
    ]);
  });

  it("refuses an empty argv and malformed env names", () => {
    expect(() => launcherArgv([], "/w")).toThrow();
    expect(envList({ A: "1", B: "x=y" })).toEqual(["A=1", "B=x=y"]);
    expect(() => envList({ "A=B": "1" })).toThrow();
    expect(() => envList({ "": "1" })).toThrow();
  });

  it("demultiplexes Docker's stream across arbitrary chunk boundaries", () => {
    const frame = (type: number, text: string) => {
      const data = Buffer.from(text);
      const header = Buffer.alloc(8);
      header[0] = type;
      header.writeUInt32BE(data.length, 4);
      return Buffer.concat([header, data]);
    };
    const wire = Buffer.concat([frame(1, "out-1 "), frame(2, "err-1"), frame(1, "héllo"), frame(1, "")]);
    for (const step of [1, 3, 7, 8, 9, wire.length]) {
      const seen: string[] = [];
      const chunks: Buffer[] = [];
      const demux = createDemuxer((stream, data) => {
        seen.push(stream);
        chunks.push(Buffer.from(data));
      });
      for (let i = 0; i < wire.length; i += step) demux.push(wire.subarray(i, i + step));
      expect(seen).toEqual(["stdout", "stderr", "stdout"]);
      expect(Buffer.concat(chunks).toString()).toBe("out-1 err-1héllo");
      expect(demux.pending()).toBe(0);
    }
  });

  it("maps Docker errors to stable codes", () => {
    const gone = mapDockerError(
      Object.assign(new Error("(HTTP code 404) no such container"), { statusCode: 404 }),
      "x",
    );
    expect(gone.code).toBe("SANDBOX_GONE");
    const stopped = mapDockerError(
      Object.assign(new Error("(HTTP code 409) container stopped/paused - Container abc is not running"), {
        statusCode: 409,
      }),
      "x",
    );
    expect(stopped.code).toBe("SANDBOX_NOT_RUNNING");
    expect(mapDockerError(new Error("socket hang up"), "x").code).toBe("SANDBOX_PROVIDER_ERROR");
  });
});

describe("parseListing", () => {
  it("parses find's NUL-separated records, names with tabs and newlines included, sorted", () => {
    const out = Buffer.from(
      [
        "f\t12\t1700000000.5\tb.txt",
        "d\t4096\t1700000001.0\ta dir",
        "l\t7\t1.0\tlink",
        "f\t0\t2.0\tweird\tname\n",
      ]
        .map((r) => `${r}\0`)
        .join(""),
    );
    const entries = parseListing(out, "docs");
    expect(entries.map((e) => [e.name, e.path, e.type, e.size])).toEqual([
      ["a dir", "docs/a dir", "directory", 4096],
      ["b.txt", "docs/b.txt", "file", 12],
      ["link", "docs/link", "symlink", 7],
      ["weird\tname\n", "docs/weird\tname\n", "file", 0],
    ]);
    expect(entries[1]?.modifiedAt.getTime()).toBe(1_700_000_000_500);
    expect(parseListing(Buffer.from("f\t1\t1.0\tx\0"), "")[0]?.path).toBe("x");
  });
});
