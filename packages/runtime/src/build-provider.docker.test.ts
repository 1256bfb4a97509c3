/**
 * The refusals docs/security.md promises as log lines are written by the provider the runtime
 * builds: a real Docker computer plants a symlink at its gateway socket, the host refuses it,
 * and the process's logger (JSON lines, redacted) gets exactly one `docker.socket.refused` line
 * with ids, the socket's name and the reason, and no path.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger } from "@rakazo/log";
import { isSandboxError, type SandboxProvider } from "@rakazo/sandbox";
import { COMPUTER_IMAGE, requireDocker } from "@rakazo/sandbox/testing";
import { afterAll, describe, expect, it } from "vitest";
import { buildProvider } from "./build-provider.ts";

const gate = await requireDocker("the runtime's provider logs its refusals");

describe.skipIf(gate.skip)(gate.title, () => {
  let dataDir = "";
  let provider: SandboxProvider | undefined;
  const refs: string[] = [];

  afterAll(async () => {
    for (const ref of refs) await provider?.destroy(ref).catch(() => undefined);
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }, 120_000);

  it("a planted gateway.sock symlink is refused with one docker.socket.refused line, without paths", async () => {
    dataDir = await mkdtemp(join(tmpdir(), "rakazo-runtime-log-"));
    const lines: string[] = [];
    const log = createLogger({ write: (line) => lines.push(line) });
    provider = await buildProvider(
      {
        kind: "docker",
        image: COMPUTER_IMAGE,
        dataDir,
        socketPath: "/var/run/docker.sock",
        runtime: "runc",
        screenLimit: 0,
        memoryBytes: 1024 ** 3,
        nanoCpus: 1_000_000_000,
        pidsLimit: 512,
        egressNetwork: "rakazo-egress",
        egressPrivateAllow: [],
      },
      log,
    );
    const computerId = `cmp_logs_${randomBytes(4).toString("hex")}`;
    const { ref } = await provider.provision({ computerId, homeKey: computerId, mode: "team" });
    refs.push(ref);
    console.error(`build-provider.docker: computer ${computerId} ${ref}, data dir ${dataDir}`);
    const sandbox = provider.sandbox(ref);
    // The computer's own user replaces its gateway socket with a link to a host file — once the
    // supervisor has bound it: provision may return before then, and a link planted earlier is
    // simply replaced by the supervisor's own socket (which is then rightly connected to).
    const planted = await sandbox.exec({
      argv: [
        "sh",
        "-c",
        "for i in $(seq 300); do [ -S /run/rakazo/gateway.sock ] && break; sleep 0.1; done; " +
          "[ -S /run/rakazo/gateway.sock ] && rm -f /run/rakazo/gateway.sock && ln -s /etc/shadow /run/rakazo/gateway.sock",
      ],
      timeoutMs: 30_000,
    });
    expect(planted.exitCode, planted.stderr).toBe(0);
    const before = lines.length;

    const outcome = await sandbox.screens?.target().then(
      () => "connected",
      (error: unknown) => (isSandboxError(error) ? error.code : String(error)),
    );
    expect(outcome).toBe("DESKTOP_UNAVAILABLE");

    const refusals = lines.slice(before).filter((line) => line.includes("docker.socket.refused"));
    expect(refusals, lines.slice(before).join("\n")).toHaveLength(1);
    const entry = JSON.parse(refusals[0] as string) as Record<string, unknown>;
    expect(entry).toMatchObject({
      level: "warn",
      msg: "docker.socket.refused",
      computerId,
      containerId: ref,
      socket: "gateway.sock",
      reason: "not_a_socket",
    });
    expect(Object.keys(entry).sort()).toEqual(
      ["computerId", "containerId", "level", "msg", "reason", "socket", "time"].sort(),
    );
    expect(refusals[0]).not.toContain(dataDir);
    expect(refusals[0]).not.toContain("/etc/shadow");
    // No path of any kind: the only slashes JSON could hold would be in a path.
    expect(refusals[0]).not.toContain("/");
  }, 180_000);

  it("home disks the host cannot give under RAKAZO_DOCKER_HOME_DISKS=auto: one warning line with the reason", async () => {
    const dir = await mkdtemp(join(tmpdir(), "rakazo-runtime-disks-"));
    const lines: string[] = [];
    const log = createLogger({ write: (line) => lines.push(line) });
    try {
      // An image the engine cannot run fails the probe's last step, as root or not.
      const built = await buildProvider(
        {
          kind: "docker",
          image: "rakazo-no-such-image:missing",
          dataDir: dir,
          socketPath: "/var/run/docker.sock",
          runtime: "runc",
          screenLimit: 0,
          memoryBytes: 1024 ** 3,
          nanoCpus: 1_000_000_000,
          pidsLimit: 512,
          egressNetwork: "rakazo-egress",
          egressPrivateAllow: [],
          homeDisks: "auto",
        },
        log,
      );
      expect(built.homeDisks).toBeUndefined();
      const warnings = lines.filter((line) => line.includes("docker.home_disks.unavailable"));
      expect(warnings, lines.join("\n")).toHaveLength(1);
      expect(JSON.parse(warnings[0] as string)).toMatchObject({
        level: "warn",
        setting: "RAKAZO_DOCKER_HOME_DISKS=auto",
        homeDisks: "off",
        reason: process.getuid?.() === 0 ? "engine_check_failed" : "not_root",
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
