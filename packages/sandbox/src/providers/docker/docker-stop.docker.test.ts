/**
 * `stop` on a real engine: a computer keeps its shutdown grace (SIGTERM, then time to exit)
 * unless the caller says it quiesced it (`{ quiesced: true }`: every browser closed, the
 * workspace saved), and is then ended at once. Either way it is stopped and starts again.
 * The container's main process here traps SIGTERM and exits 0 after its cleanup, so the exit
 * code tells which stop it got: 0 after the grace, 137 (SIGKILL) without one. The stop waits
 * until the trap is set (its loop's first `sleep` runs): a TERM that reaches bash before it has
 * read the trap ends it with 143 whatever the stop did, which says nothing about the grace.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SandboxProvider } from "../../provider.ts";
import { DOCKER_RUNTIME } from "../../testing/docker.ts";
import { requireDocker } from "../../testing/tools.ts";
import { createDockerProvider } from "./docker-provider.ts";

const IMAGE = process.env.RAKAZO_COMPUTER_IMAGE ?? "rakazo-computer:latest";
const LABEL_PREFIX = DOCKER_RUNTIME === "runc" ? "rakazo-test-stop" : `rakazo-test-stop-${DOCKER_RUNTIME}`;
const docker = new Docker({ socketPath: "/var/run/docker.sock" });
const gate = await requireDocker(`docker provider stop (${DOCKER_RUNTIME})`);

describe.skipIf(gate.skip)(gate.title, () => {
  let provider: SandboxProvider;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "rakazo-docker-stop-"));
    provider = createDockerProvider({
      docker,
      image: IMAGE,
      dataDir,
      labelPrefix: LABEL_PREFIX,
      runtime: DOCKER_RUNTIME,
      memoryBytes: 512 * 1024 ** 2,
      pidsLimit: 256,
      // Cleanup on SIGTERM that takes a moment, then a clean exit (what a grace is for).
      command: ["bash", "-c", "trap 'sleep 1; exit 0' TERM; while :; do sleep 0.2 & wait $!; done"],
    });
  });

  afterAll(async () => {
    const mine = await docker.listContainers({
      all: true,
      filters: { label: [`${LABEL_PREFIX}.managed=true`] },
    });
    for (const c of mine) await docker.getContainer(c.Id).remove({ force: true, v: true });
    await rm(dataDir, { recursive: true, force: true });
  }, 60_000);

  const exitCode = async (ref: string) => (await docker.getContainer(ref).inspect()).State.ExitCode;
  const trapSet = (ref: string) =>
    expect
      .poll(
        async () => {
          const { Processes } = (await docker.getContainer(ref).top({ ps_args: "-o pid,args" })) as {
            Processes?: string[][];
          };
          return Processes?.some((row) => row[1]?.startsWith("sleep")) ?? false;
        },
        { timeout: 10_000, interval: 50 },
      )
      .toBe(true);

  it.each([
    { options: undefined, code: 0, what: "keeps its grace by default" },
    { options: { quiesced: false }, code: 0, what: "keeps its grace when not quiesced" },
    { options: { quiesced: true }, code: 137, what: "is ended at once once quiesced" },
  ])(
    "a computer $what, is stopped and starts again",
    async ({ options, code }) => {
      const computerId = `cmp_stop${Math.random().toString(36).slice(2, 10)}`;
      const { ref } = await provider.provision({
        computerId,
        mode: "private",
        homeKey: `home_${computerId}`,
      });
      expect(await provider.status(ref)).toBe("running");
      await trapSet(ref);
      await provider.stop(ref, options);
      expect(await provider.status(ref)).toBe("stopped");
      expect(await exitCode(ref)).toBe(code);
      const again = await provider.provision({
        computerId,
        mode: "private",
        ref,
        homeKey: `home_${computerId}`,
      });
      expect(again).toEqual({ ref, replaced: false });
      expect(await provider.status(ref)).toBe("running");
      await provider.destroy(ref);
    },
    60_000,
  );
});
