/**
 * The Docker adapter against a real engine and the real computer image: the shared
 * conformance suite plus Docker-specific invariants. Every container carries the
 * `rakazo-test.*` labels and is removed in afterAll.
 *
 * Needs: a reachable engine (scripts/docker-engine.sh) and the image
 * (infra/sandboxes/image/build.sh, or RAKAZO_COMPUTER_IMAGE).
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { lstat, mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import Docker from "dockerode";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { isSandboxError } from "../../errors.ts";
import type { SandboxProvider } from "../../provider.ts";
import { buildArchive, readAll } from "../../testing/archive.ts";
import { CONTRACT_TESTS, runSandboxProviderContract } from "../../testing/contract.ts";
import { DOCKER_RUNTIME } from "../../testing/docker.ts";
import { requireDocker } from "../../testing/tools.ts";
import { computerSlug } from "./container-spec.ts";
import { createDockerProvider } from "./docker-provider.ts";
import { createSupervisedDockerProvider } from "./supervised.ts";

const IMAGE = process.env.RAKAZO_COMPUTER_IMAGE ?? "rakazo-computer:latest";
// Under another runtime (the runsc run, vitest.config.ts) the containers are told apart by label.
const LABEL_PREFIX = DOCKER_RUNTIME === "runc" ? "rakazo-test" : `rakazo-test-${DOCKER_RUNTIME}`;
const docker = new Docker({ socketPath: "/var/run/docker.sock" });

// Skipped locally where there is no Docker engine or no computer image; under CI=true that
// fails instead (@rakazo/sandbox/testing). CI starts the engine and builds the image first.
const gate = await requireDocker(`docker provider (${DOCKER_RUNTIME})`);

const dataDirs: string[] = [];
const providers: SandboxProvider[] = [];
async function newProvider({
  imageCommand = false,
}: {
  imageCommand?: boolean;
} = {}): Promise<{ provider: SandboxProvider; dataDir: string }> {
  const dataDir = await mkdtemp(join(tmpdir(), "rakazo-docker-"));
  dataDirs.push(dataDir);
  const provider = createDockerProvider({
    docker,
    image: IMAGE,
    dataDir,
    labelPrefix: LABEL_PREFIX,
    runtime: DOCKER_RUNTIME,
    memoryBytes: 1024 ** 3,
    pidsLimit: 512,
    // Most tests cover the provider, not the supervisor: keep the container up without it.
    ...(imageCommand ? {} : { command: ["sleep", "infinity"] }),
  });
  providers.push(provider);
  return { provider, dataDir };
}

afterAll(async () => {
  const mine = await docker.listContainers({
    all: true,
    filters: { label: [`${LABEL_PREFIX}.managed=true`] },
  });
  for (const c of mine) await docker.getContainer(c.Id).remove({ force: true, v: true });
  for (const dir of dataDirs) await rm(dir, { recursive: true, force: true });
}, 120_000);

describe.skipIf(gate.skip)(gate.title, () => {
  runSandboxProviderContract({
    name: "docker",
    create: async () => (await newProvider()).provider,
    timeoutMs: 60_000,
    skip: [
      ...CONTRACT_TESTS.desktop.map((test) => ({
        test,
        reason:
          "Docker desktops are wired through the supervised desktop (createDockerProvider({ desktop }))",
      })),
      ...[...CONTRACT_TESTS.terminal, ...CONTRACT_TESTS.processes].map((test) => ({
        test,
        reason:
          "the terminal and background commands are the supervisor's: covered by the supervised run below",
      })),
    ],
  });

  // The contract's desktop, terminal and background-command tests on the provider as the system
  // runs it: through the in-computer supervisor (the run above has none of that wiring).
  let supervisedDataDir: string | undefined;
  runSandboxProviderContract({
    name: "docker with supervised desktops",
    // One data dir for every instance: a second instance is the same deployment restarted.
    create: async () => {
      if (!supervisedDataDir) {
        supervisedDataDir = await mkdtemp(join(tmpdir(), "rakazo-docker-desktops-"));
        dataDirs.push(supervisedDataDir);
      }
      return createSupervisedDockerProvider({
        image: IMAGE,
        dataDir: supervisedDataDir,
        runtime: DOCKER_RUNTIME,
      });
    },
    // Two cold Chromium starts and five page visits through `docker exec` polling, on a loaded host.
    timeoutMs: 300_000,
    only: {
      tests: [...CONTRACT_TESTS.desktop, ...CONTRACT_TESTS.terminal, ...CONTRACT_TESTS.processes],
      reason: "covered by the run of the same adapter above",
    },
  });

  describe("docker specifics", () => {
    let provider: SandboxProvider;
    let dataDir: string;
    const touched: string[] = [];

    beforeAll(async () => {
      ({ provider, dataDir } = await newProvider());
    });

    afterEach((context) => {
      if (context.task.result?.state === "fail") {
        console.error(`failed "${context.task.name}": containers involved: ${touched.join(", ")}`);
      }
      touched.length = 0;
    });

    const provision = async (computerId = `cmp_${randomBytes(5).toString("hex")}`, ref?: string) => {
      const result = await provider.provision({
        computerId,
        homeKey: computerId,
        mode: "team",
        ref: ref ?? null,
      });
      touched.push(result.ref);
      return { computerId, ...result, sandbox: provider.sandbox(result.ref) };
    };

    it("runs with networking off: only loopback exists (recipes: --network none)", async () => {
      const { ref, sandbox } = await provision();
      // /proc/net/dev, not /sys/class/net: gVisor 2022-12 answers EINVAL to listing its sysfs.
      const nets = await sandbox.exec({ argv: ["sh", "-c", "tail -n +3 /proc/net/dev | cut -d: -f1"] });
      expect(nets.stdout.split(/\s+/).filter(Boolean)).toEqual(["lo"]);
      const info = await docker.getContainer(ref).inspect();
      expect(info.HostConfig.NetworkMode).toBe("none");
      expect(info.HostConfig.Memory).toBe(1024 ** 3);
      expect(info.HostConfig.PidsLimit).toBe(512);
      expect(info.HostConfig.ShmSize).toBeGreaterThanOrEqual(256 * 1024 ** 2);
      expect(info.Config.Labels[`${LABEL_PREFIX}.computer`]).toBeDefined();
    });

    it(`runs under the configured OCI runtime (${DOCKER_RUNTIME})`, async () => {
      const { ref, sandbox } = await provision();
      expect((await docker.getContainer(ref).inspect()).HostConfig.Runtime).toBe(DOCKER_RUNTIME);
      // gVisor's own kernel log; under runc the host's (unreadable to uid 1000, never gVisor's).
      const log = await sandbox.exec({ argv: ["sh", "-c", "dmesg 2>/dev/null | head -n 3"] });
      expect(log.stdout.includes("gVisor")).toBe(DOCKER_RUNTIME === "runsc");
      // The known gap of gVisor 2022-12 (docs/security.md): coreutils' statx(AT_NO_AUTOMOUNT)
      // is EINVAL, so Rakazo's own scripts avoid `stat`/`ls -l`. A runsc that fixes it fails
      // here, so the workarounds and the documented gap go with it.
      const stat = await sandbox.exec({ argv: ["stat", "-c", "%s", "/etc/passwd"] });
      if (DOCKER_RUNTIME === "runsc") expect(stat.stderr).toContain("Invalid argument");
      else expect(stat.exitCode, stat.stderr).toBe(0);
    });

    // Only in the runsc run: the other runtime, runc, is always there (under runc, runsc may not be).
    it.runIf(DOCKER_RUNTIME !== "runc")(
      "a computer made under another runtime is replaced at its next start",
      async () => {
        const computerId = `cmp_${randomBytes(5).toString("hex")}`;
        const underRunc = createDockerProvider({
          docker,
          image: IMAGE,
          dataDir,
          labelPrefix: LABEL_PREFIX,
          runtime: "runc",
          command: ["sleep", "infinity"],
        });
        const old = await underRunc.provision({ computerId, homeKey: computerId, mode: "team", ref: null });
        touched.push(old.ref);
        await underRunc.sandbox(old.ref).files.write("kept.txt", "home stays");
        await underRunc.stop(old.ref);
        const next = await provision(computerId, old.ref);
        expect(next.replaced).toBe(true);
        expect((await docker.getContainer(next.ref).inspect()).HostConfig.Runtime).toBe(DOCKER_RUNTIME);
        expect(Buffer.from(await next.sandbox.files.read("kept.txt")).toString()).toBe("home stays");
      },
    );

    it("runs commands as the workspace user in the workspace", async () => {
      const { sandbox } = await provision();
      const who = await sandbox.exec({ argv: ["sh", "-c", 'id -u; id -g; pwd; echo "$HOME"'] });
      expect(who.stdout.split("\n")).toEqual(["1000", "1000", "/home/user/rakazo-home", "/home/user", ""]);
    });

    it("splits stdout and stderr and streams both", async () => {
      const { sandbox } = await provision();
      const seen: string[] = [];
      const result = await sandbox.exec({
        argv: ["sh", "-c", "echo out1; echo err1 >&2; printf 'héllo'; exit 7"],
        onOutput: (c) => seen.push(`${c.stream}:${c.data}`),
      });
      expect(result).toEqual({ exitCode: 7, stdout: "out1\nhéllo", stderr: "err1\n", timedOut: false });
      expect(seen.filter((s) => s.startsWith("stderr:")).join("")).toBe("stderr:err1\n");
      expect(
        seen
          .filter((s) => s.startsWith("stdout:"))
          .map((s) => s.slice(7))
          .join(""),
      ).toBe("out1\nhéllo");
    });

    it("a timeout kills the whole process group, background children included", async () => {
      const { sandbox } = await provision();
      const result = await sandbox.exec({
        argv: ["sh", "-c", "sleep 61 & sleep 62; echo never"],
        timeoutMs: 500,
      });
      expect(result).toMatchObject({ exitCode: 124, timedOut: true });
      expect(result.stdout).not.toContain("never");
      const ps = await sandbox.exec({ argv: ["ps", "-eo", "args"] });
      expect(ps.stdout).not.toMatch(/sleep 6[12]/);
      // A command that exits 124 by itself before its deadline is not a timeout.
      const own = await sandbox.exec({ argv: ["sh", "-c", "exit 124"], timeoutMs: 10_000 });
      expect(own).toMatchObject({ exitCode: 124, timedOut: false });
    });

    it("a missing container is replaced and the home is intact (PRV-3, PRV-5)", async () => {
      const first = await provision();
      await first.sandbox.files.write("notes/keep.txt", "survives the container");
      await docker.getContainer(first.ref).remove({ force: true });
      expect(await provider.status(first.ref)).toBe("missing");
      const next = await provision(first.computerId, first.ref);
      expect(next.replaced).toBe(true);
      expect(next.ref).not.toBe(first.ref);
      expect(Buffer.from(await next.sandbox.files.read("notes/keep.txt")).toString()).toBe(
        "survives the container",
      );
      // The home lives on the host, owned by the workspace user.
      const onHost = join(dataDir, "homes", first.computerId, "notes", "keep.txt");
      expect(await readFile(onHost, "utf8")).toBe("survives the container");
      expect((await stat(onHost)).uid).toBe(1000);
    });

    it("reconnects by label when the stored ref is stale, and destroy keeps the home", async () => {
      const first = await provision();
      await first.sandbox.files.write("a.txt", "A");
      const again = await provision(first.computerId, "0123456789ab-not-a-container");
      expect(again).toMatchObject({ ref: first.ref, replaced: false });
      await provider.destroy(first.ref);
      expect(await provider.status(first.ref)).toBe("missing");
      expect(await readFile(join(dataDir, "homes", first.computerId, "a.txt"), "utf8")).toBe("A");
      await expect(lstat(join(dataDir, "run", computerSlug(first.computerId)))).rejects.toThrow();
    });

    it("exposes /run/rakazo from the host's run dir/computer, the run dir itself staying the host's", async () => {
      const { computerId, sandbox } = await provision();
      const made = await sandbox.exec({
        argv: [
          "python3",
          "-c",
          "import socket; s=socket.socket(socket.AF_UNIX); s.bind('/run/rakazo/probe.sock')",
        ],
      });
      expect(made.exitCode).toBe(0);
      const runDir = join(dataDir, "run", computerSlug(computerId));
      const hostSock = join(runDir, "computer", "probe.sock");
      expect((await lstat(hostSock)).isSocket()).toBe(true);
      expect(Buffer.byteLength(hostSock)).toBeLessThan(108);
      // Where the host links the sockets it connects to: ours, and not writable from the computer.
      const owned = await lstat(runDir);
      expect([owned.uid, owned.mode & 0o022]).toEqual([process.getuid?.(), 0]);
      const write = await sandbox.exec({
        argv: ["sh", "-c", "touch /run/x 2>/dev/null; ls -a /run/rakazo/.."],
      });
      expect(write.stdout).not.toContain("computer");
    });

    it("refuses symlinks that leave the workspace", async () => {
      const { sandbox } = await provision();
      await sandbox.exec({ argv: ["ln", "-s", "/etc", "escape"] });
      await sandbox.exec({ argv: ["ln", "-s", "/etc/hostname", "host-file"] });
      for (const attempt of [
        () => sandbox.files.read("escape/passwd"),
        () => sandbox.files.read("host-file"),
        () => sandbox.files.list("escape"),
        () => sandbox.files.write("escape/evil", "x"),
      ]) {
        const error = await attempt().then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(isSandboxError(error, "INVALID_PATH"), String(error)).toBe(true);
      }
      expect((await sandbox.files.list("")).find((e) => e.name === "escape")?.type).toBe("symlink");
    });

    it("refuses a hostile archive before writing anything (PER-6)", async () => {
      const { computerId, sandbox } = await provision();
      await sandbox.files.write("precious.txt", "keep me");
      const home = join(dataDir, "homes", computerId);
      const before = await readdir(home);
      const hostile = await buildArchive([
        { name: "first.txt", data: "written first?" },
        { name: "sub/../../../outside.txt", data: "evil" },
      ]);
      const error = await sandbox.files.importWorkspace(Readable.from(hostile)).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isSandboxError(error, "INVALID_ARCHIVE"), String(error)).toBe(true);
      expect(await readdir(home)).toEqual(before);
      // No staging left behind beside the homes, nothing escaped above them.
      expect((await readdir(join(dataDir, "homes"))).filter((n) => n.startsWith("."))).toEqual([]);
      await expect(lstat(join(dataDir, "outside.txt"))).rejects.toThrow();
    });

    it("imports a workspace owned by the workspace user, replacing the old contents", async () => {
      const { sandbox } = await provision();
      await sandbox.files.write("old.txt", "old");
      const archive = await buildArchive([
        { name: "docs/", type: "directory" },
        { name: "docs/new.txt", data: "new" },
      ]);
      await sandbox.files.importWorkspace(Readable.from(archive));
      expect((await sandbox.files.list("")).map((e) => e.name)).toEqual(["docs"]);
      // The workspace user can change what was imported.
      const edit = await sandbox.exec({ argv: ["sh", "-c", "echo more >> docs/new.txt && rm docs/new.txt"] });
      expect(edit.exitCode, edit.stderr).toBe(0);
    });

    it("exports only directories and regular files, with relative paths", async () => {
      const { sandbox } = await provision();
      await sandbox.files.write("d/f.txt", "f");
      await sandbox.exec({ argv: ["ln", "-s", "d/f.txt", "link"] });
      await sandbox.exec({ argv: ["mkfifo", "pipe"] });
      const archive = await readAll(await sandbox.files.exportWorkspace());
      const names = execFileSync("tar", ["-tvf", "-"], { input: archive }).toString();
      expect(names).toMatch(/^d.* d\/$/m);
      expect(names).toMatch(/^-.* d\/f\.txt$/m);
      expect(names).not.toMatch(/link|pipe|^\/|\.\.\//m);
    });

    it("the image's own command runs the supervisor, whose socket appears in the host runtime dir", async () => {
      const own = await newProvider({ imageCommand: true });
      const computerId = `cmp_${randomBytes(5).toString("hex")}`;
      const { ref } = await own.provider.provision({ computerId, homeKey: computerId, mode: "team" });
      touched.push(ref);
      const socket = join(own.dataDir, "run", computerSlug(computerId), "computer", "supervisor.sock");
      const deadline = Date.now() + 15_000;
      while (
        Date.now() < deadline &&
        !(await lstat(socket).then(
          (s) => s.isSocket(),
          () => false,
        ))
      ) {
        await new Promise((r) => setTimeout(r, 200));
      }
      expect((await lstat(socket)).isSocket()).toBe(true);
      expect(await own.provider.status(ref)).toBe("running");
    });

    it("stop on a missing container is SANDBOX_GONE; destroy is idempotent", async () => {
      const { ref } = await provision();
      await provider.destroy(ref);
      await provider.destroy(ref);
      const error = await provider.stop(ref).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isSandboxError(error, "SANDBOX_GONE")).toBe(true);
    });
  });
});
