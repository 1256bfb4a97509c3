/**
 * Docker's exec through the supervisor's socket: the same results as `docker exec`
 * (docker-provider.docker.test.ts covers that path), proven to have run under the supervisor,
 * and background commands that stream, are found again by a new provider instance, are killed
 * as a group, and are gone with the container.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Sandbox, SandboxProvider } from "../../provider.ts";
import { requireDocker } from "../../testing/tools.ts";
import { createDockerProvider } from "./docker-provider.ts";
import { createSupervisedDockerProvider } from "./supervised.ts";

const IMAGE = process.env.RAKAZO_COMPUTER_IMAGE ?? "rakazo-computer:latest";
const docker = new Docker({ socketPath: "/var/run/docker.sock" });
/** The command line of the command's parent. */
const PARENT = "tr '\\0' ' ' < /proc/$PPID/cmdline 2>/dev/null || echo none";
const gate = await requireDocker("docker exec through the supervisor");

describe.skipIf(gate.skip)(gate.title, () => {
  let dataDir: string;
  let provider: SandboxProvider;
  let ref = "";
  let sandbox: Sandbox;
  const computerId = `cmp_${randomBytes(5).toString("hex")}`;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "rakazo-sup-exec-"));
    provider = createSupervisedDockerProvider({ image: IMAGE, dataDir });
    ({ ref } = await provider.provision({ computerId, homeKey: computerId, mode: "team", ref: null }));
    sandbox = provider.sandbox(ref);
    // The image's command starts the supervisor; exec goes through it once it listens.
    for (let i = 0; i < 100; i += 1) {
      const probe = await sandbox.exec({ argv: ["sh", "-c", PARENT] });
      if (probe.stdout.includes("supervisor.mjs")) break;
      await new Promise((r) => setTimeout(r, 100));
    }
  }, 120_000);

  afterAll(async () => {
    if (ref) await provider.destroy(ref);
    await rm(dataDir, { recursive: true, force: true });
  }, 60_000);

  it("runs under the supervisor with docker exec's results: split, streamed, codes, stdin, env, cwd", async () => {
    // Through `docker exec` the command's parent is outside the container (PPID 0).
    const parent = await sandbox.exec({ argv: ["sh", "-c", PARENT] });
    expect(parent.stdout).toContain("/opt/rakazo/supervisor.mjs serve");
    const seen: string[] = [];
    const split = await sandbox.exec({
      argv: ["sh", "-c", "echo out1; echo err1 >&2; printf 'héllo'; exit 7"],
      onOutput: (c) => seen.push(`${c.stream}:${c.data}`),
    });
    expect(split).toEqual({ exitCode: 7, stdout: "out1\nhéllo", stderr: "err1\n", timedOut: false });
    expect(
      seen
        .filter((s) => s.startsWith("stdout:"))
        .map((s) => s.slice(7))
        .join(""),
    ).toBe("out1\nhéllo");
    const who = await sandbox.exec({
      argv: ["sh", "-c", 'id -u; pwd; echo "$HOME $GREETING"; cat'],
      cwd: "",
      env: { GREETING: "hi" },
      stdin: "from stdin",
    });
    expect(who.stdout).toBe("1000\n/home/user/rakazo-home\n/home/user hi\nfrom stdin");
    expect((await sandbox.exec({ argv: ["no-such-command"] })).exitCode).toBe(127);
    const missing = await sandbox.exec({ argv: ["true"], cwd: "no/such/dir" });
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr).toContain("no/such/dir");
  });

  it("a timeout kills the whole group with 124; exit 124 of its own is not a timeout", async () => {
    const result = await sandbox.exec({
      argv: ["sh", "-c", "sleep 61 & sleep 62; echo never"],
      timeoutMs: 500,
    });
    expect(result).toMatchObject({ exitCode: 124, timedOut: true });
    expect(result.stdout).not.toContain("never");
    const ps = await sandbox.exec({ argv: ["ps", "-eo", "args"] });
    expect(ps.stdout).not.toMatch(/sleep 6[12]/);
    expect(await sandbox.exec({ argv: ["sh", "-c", "exit 124"], timeoutMs: 10_000 })).toMatchObject({
      exitCode: 124,
      timedOut: false,
    });
  });

  it("background commands stream, are read again by a new client, are killed as a group and die with the computer", async () => {
    const owner = `external:${computerId}`;
    const processes = sandbox.processes;
    if (!processes) throw new Error("the supervised Docker provider wires background commands");
    const { handle } = await processes.start({
      owner,
      argv: ["sh", "-c", "echo started; sleep 63 & while true; do echo tick; sleep 0.2; done"],
    });
    const first = await processes.read({ owner, handle, since: 0, waitMs: 5_000 });
    expect(first.chunks[0]).toMatchObject({
      stream: "stdout",
      offset: 0,
      data: expect.stringContaining("started"),
    });
    expect(first.running).toBe(true);
    // A new provider instance (a restarted API) reads on from the offset it was given.
    const again = createSupervisedDockerProvider({ image: IMAGE, dataDir }).sandbox(ref).processes;
    const later = await again?.read({ owner, handle, since: first.next, waitMs: 5_000 });
    expect(later?.chunks.map((c) => c.data).join("")).toContain("tick");
    expect(later?.chunks[0]?.offset).toBe(first.next);
    // Another owner cannot name it.
    await expect(processes.read({ owner: "external:cmp_other", handle })).rejects.toMatchObject({
      code: "PROCESS_NOT_FOUND",
    });
    expect(await processes.kill({ owner, handle, signal: "SIGKILL" })).toMatchObject({ signalled: true });
    let done = await processes.read({ owner, handle, since: 0, waitMs: 5_000 });
    while (done.running) done = await processes.read({ owner, handle, since: done.next, waitMs: 5_000 });
    expect(done).toMatchObject({ running: false, exitCode: 137, signal: "SIGKILL" });
    expect((await sandbox.exec({ argv: ["ps", "-eo", "args"] })).stdout).not.toMatch(/sleep 63/);

    // One left running goes with the computer.
    await processes.start({ owner, argv: ["sleep", "64"] });
    await provider.destroy(ref);
    await expect(docker.getContainer(ref).inspect()).rejects.toMatchObject({ statusCode: 404 });
    ref = "";
  });

  it("a container without the supervisor still runs commands through docker exec", async () => {
    const plain = createDockerProvider({
      image: IMAGE,
      dataDir,
      command: ["sleep", "infinity"],
      execThroughSupervisor: true,
    });
    const id = `cmp_${randomBytes(5).toString("hex")}`;
    const made = await plain.provision({ computerId: id, homeKey: id, mode: "team", ref: null });
    try {
      const result = await plain.sandbox(made.ref).exec({ argv: ["sh", "-c", "echo $PPID"] });
      expect(result).toEqual({ exitCode: 0, stdout: "0\n", stderr: "", timedOut: false });
    } finally {
      await plain.destroy(made.ref);
    }
  });
});
