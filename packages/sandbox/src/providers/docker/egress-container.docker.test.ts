/**
 * The host-address watcher's lifetime under races with a provision, against a real engine and
 * the real computer image: a removal never leaves a running proxy without its watcher. The
 * interleavings are made certain by holding one engine call of the provider until the other
 * side has moved on (the client is the real one; only the timing is the test's).
 *
 * Computers run with no interface (as always); their proxies sit on an `--internal` network the
 * test makes, so nothing can leave this machine, and no test here sends traffic anywhere.
 * Containers carry this file's own label prefix; afterAll removes them and fails the suite when
 * a watcher was left after every computer was destroyed.
 */
import { execFileSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SandboxProvider } from "../../provider.ts";
import { requireDocker } from "../../testing/tools.ts";
import { createDockerProvider } from "./docker-provider.ts";

const IMAGE = process.env.RAKAZO_COMPUTER_IMAGE ?? "rakazo-computer:latest";
const tag = randomBytes(4).toString("hex");
const PREFIX = `rakazo-wtest${tag}`;
const NETWORK = `rakazo-wtest-${tag}`;

const gate = await requireDocker("egress containers: the host-address watcher's lifetime");

const docker = (...args: string[]): string =>
  execFileSync("docker", args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();

/** One engine call held after (or before) it runs, until the test releases it. */
interface Hold {
  /** Resolves once the held call is waiting. */
  readonly reached: Promise<void>;
  release(): void;
}

function hold(): Hold & { arrive(): Promise<void> } {
  let reached = (): void => {};
  let release = (): void => {};
  const arrived = new Promise<void>((resolve) => {
    reached = resolve;
  });
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  return {
    reached: arrived,
    release,
    arrive: async () => {
      reached();
      await released;
    },
  };
}

/**
 * A real client whose next matching `listContainers` (held after it answered) or
 * `createContainer` (held before it runs) waits for the test.
 */
function heldClient() {
  const client = new Docker({ socketPath: "/var/run/docker.sock" });
  let listHold:
    | { match: (options?: Docker.ContainerListOptions) => boolean; hold: ReturnType<typeof hold> }
    | undefined;
  let createHold:
    | { match: (options: Docker.ContainerCreateOptions) => boolean; hold: ReturnType<typeof hold> }
    | undefined;
  const list = client.listContainers.bind(client);
  const create = client.createContainer.bind(client);
  client.listContainers = (async (options?: Docker.ContainerListOptions) => {
    const found = await list(options);
    const pending = listHold;
    if (pending?.match(options)) {
      listHold = undefined;
      await pending.hold.arrive();
    }
    return found;
  }) as typeof client.listContainers;
  client.createContainer = (async (options: Docker.ContainerCreateOptions) => {
    const pending = createHold;
    if (pending?.match(options)) {
      createHold = undefined;
      await pending.hold.arrive();
    }
    return create(options);
  }) as typeof client.createContainer;
  return {
    client,
    /** Holds the next listing of every proxy (the watcher's count), after it answered. */
    holdProxyCount(): Hold {
      const held = hold();
      const only = `${PREFIX}.egress-of`;
      listHold = {
        match: (options) => JSON.stringify(options?.filters) === JSON.stringify({ label: [only] }),
        hold: held,
      };
      return held;
    },
    /** Holds the next creation of a proxy container, before it is made. */
    holdProxyCreate(): Hold {
      const held = hold();
      createHold = { match: (options) => options.name?.endsWith("-egress") === true, hold: held };
      return held;
    },
  };
}

describe.skipIf(gate.skip)(gate.title, () => {
  const dataDirs: string[] = [];
  const providers: { provider: SandboxProvider; refs: string[] }[] = [];

  beforeAll(() => {
    docker("network", "create", "--internal", "--label", `${PREFIX}.managed=true`, NETWORK);
  });

  afterAll(async () => {
    for (const { provider, refs } of providers) {
      for (const ref of refs) await provider.destroy(ref).catch(() => undefined);
    }
    const watchers = docker(
      "ps",
      "-a",
      "--filter",
      `label=${PREFIX}.host-addresses`,
      "--format",
      "{{.Names}}",
    )
      .split("\n")
      .filter(Boolean);
    const mine = docker("ps", "-aq", "--filter", `label=${PREFIX}.managed=true`).split("\n").filter(Boolean);
    if (mine.length > 0) docker("rm", "-f", "-v", ...mine);
    try {
      docker("network", "rm", NETWORK);
    } catch (error) {
      console.error(`egress-container.docker: could not remove ${NETWORK}: ${(error as Error).message}`);
    }
    for (const dir of dataDirs) await rm(dir, { recursive: true, force: true });
    expect(watchers, "host-address watchers left after every computer was destroyed").toEqual([]);
  }, 120_000);

  const setup = async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "rakazo-wtest-"));
    dataDirs.push(dataDir);
    const held = heldClient();
    const events: string[] = [];
    const provider = createDockerProvider({
      docker: held.client,
      image: IMAGE,
      dataDir,
      labelPrefix: PREFIX,
      memoryBytes: 1024 ** 3,
      pidsLimit: 512,
      egressNetwork: NETWORK,
      log: (event) => events.push(event.event),
    });
    const refs: string[] = [];
    providers.push({ provider, refs });
    const watcherDir = join(dataDir, "run", "host-addresses");
    const name = `${PREFIX}-host-addresses-${createHash("sha256").update(watcherDir).digest("hex").slice(0, 8)}`;
    return {
      held,
      events,
      provider,
      /** The watcher's state as `docker ps -a` shows it by name: "" when there is none. */
      watcher: () => docker("ps", "-a", "--filter", `name=^${name}$`, "--format", "{{.State}}"),
      provision: async (suffix: string) => {
        const computerId = `cmp_wtest${suffix}${tag}`;
        const { ref } = await provider.provision({
          computerId,
          homeKey: `home_${computerId}`,
          mode: "team",
          network: { mode: "egress" },
        });
        refs.push(ref);
        return ref;
      },
    };
  };

  it("a proxy that starts while the last one's removal counts keeps the watcher (the removal recounts)", async () => {
    const { held, events, provider, watcher, provision } = await setup();
    const first = await provision("a");
    expect(watcher()).toBe("running");
    // The removal counts no live proxy, then waits while another computer's proxy starts.
    const counted = held.holdProxyCount();
    const destroying = provider.destroy(first);
    await counted.reached;
    await provision("b");
    counted.release();
    await destroying;
    expect(watcher(), "the new proxy's watcher").toBe("running");
    expect(events).toEqual(
      expect.arrayContaining(["docker.egress.watcher_removed", "docker.egress.watcher_restored"]),
    );
  }, 240_000);

  it("a proxy made after the removal finished finds the watcher gone and makes it again", async () => {
    const { held, provider, watcher, provision } = await setup();
    const first = await provision("c");
    // The provision has ensured the watcher and waits to make its proxy; meanwhile the last
    // proxy goes, and the watcher with it.
    const creating = held.holdProxyCreate();
    const provisioning = provision("d");
    await creating.reached;
    await provider.destroy(first);
    expect(watcher(), "no proxy of the data dir left").toBe("");
    creating.release();
    await provisioning;
    expect(watcher(), "made again once the new proxy runs").toBe("running");
  }, 240_000);
});
