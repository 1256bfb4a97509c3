/**
 * The container's main supervisor and the command path racing at boot (seen in CI after a
 * machine replacement): a host call reached the new container before its main supervisor had
 * taken the lock, so the command path started a detached one; the main one then found the lock
 * held and exited, and with it (it is the init's only child) the whole container, SIGKILLing
 * every command running in it. The main supervisor must stand by instead, take over when the
 * holder dies, and pass `docker stop` on to the holder for a clean shutdown.
 *
 * Real image, `--network none`; the main supervisor starts 3 s late so the command path wins.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { promisify } from "node:util";
import { COMPUTER_IMAGE, requireDocker } from "@rakazo/sandbox/testing";
import { afterAll, describe, expect, it } from "vitest";

const gate = await requireDocker("the container's main supervisor");
const run = promisify(execFile);
// The provider bind-mounts /run/rakazo; a bare container has no such directory it may write.
const RUN_DIR = "/tmp/rakazo-run";
const docker = async (...args: string[]) => (await run("docker", args, { timeout: 60_000 })).stdout.trim();

async function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((done) => setTimeout(done, 200));
  }
}

describe.skipIf(gate.skip)(gate.title, () => {
  const names: string[] = [];
  afterAll(async () => {
    for (const name of names) await docker("rm", "-f", name).catch(() => undefined);
  });

  const running = async (name: string) =>
    (await docker("inspect", "-f", "{{.State.Running}}", name)) === "true";
  const health = async (name: string) =>
    JSON.parse(await docker("exec", name, "node", "/opt/rakazo/supervisor.mjs", "health", "{}"));
  const holder = (name: string) => docker("exec", name, "cat", `${RUN_DIR}/supervisor.pid`);
  const standingBy = (name: string) =>
    until("the main supervisor standing by", async () => {
      if (!(await running(name))) throw new Error(`the container exited: ${await docker("logs", name)}`);
      return (await run("docker", ["logs", name])).stderr.includes("standing by") ? true : undefined;
    });

  /** A computer container whose main supervisor starts 3 s late, after the command path's. */
  async function racedComputer(): Promise<{ name: string; first: string }> {
    const name = `rakazo-test-supervisor-main-${randomBytes(4).toString("hex")}`;
    names.push(name);
    await docker(
      "run",
      "-d",
      "--name",
      name,
      "--network",
      "none",
      "--label",
      "rakazo.test=1",
      "--env",
      `RAKAZO_RUN_DIR=${RUN_DIR}`,
      COMPUTER_IMAGE,
      "sh",
      "-c",
      // `exec`: the supervisor is the init's child, as with the image's own CMD.
      "sleep 3; exec node /opt/rakazo/supervisor.mjs serve",
    );
    // The command path finds nothing listening and starts the daemon itself.
    expect(await health(name)).toMatchObject({ ok: true });
    const first = await holder(name);
    // The main supervisor comes up, finds the lock held, and must not take the container down.
    await standingBy(name);
    expect(await health(name)).toMatchObject({ ok: true });
    expect(await holder(name)).toBe(first);
    return { name, first };
  }

  it("stands by when the command path started first, and takes over when that one dies", async () => {
    const { name, first } = await racedComputer();
    await docker("exec", name, "kill", "-9", first);
    const next = await until("the main supervisor taking over", async () => {
      const pid = await holder(name).catch(() => "");
      return pid !== "" && pid !== first ? pid : undefined;
    });
    expect(await health(name)).toMatchObject({ ok: true });
    expect(await holder(name)).toBe(next);
    expect(await running(name)).toBe(true);
  }, 120_000);

  it("passes docker stop on to the holder, which shuts down cleanly", async () => {
    const { name } = await racedComputer();
    await docker("stop", "-t", "30", name);
    expect(await docker("inspect", "-f", "{{.State.ExitCode}}", name)).toBe("0");
    // A clean shutdown removes the lock; a holder killed with the container leaves it.
    await expect(run("docker", ["cp", `${name}:${RUN_DIR}/supervisor.pid`, "-"])).rejects.toThrow(
      /Could not find|No such/,
    );
  }, 120_000);
});
