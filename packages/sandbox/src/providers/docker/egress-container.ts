/**
 * The per-computer egress proxy container's lifecycle: made, started, stopped and
 * removed beside its computer, on the deployment's upstream network. Its decisions live in
 * egress-proxy/; its create options in network-spec.ts. Before a proxy runs, the data dir's
 * host-address watcher (one container in the host's network namespace) runs and has written the
 * host's addresses, which the proxy re-reads as they change. The watcher lives only as long as
 * the data dir has a proxy, and runs only while one of them runs (`settleWatcher`).
 */
import { createHash } from "node:crypto";
import { chown, lstat, mkdir, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import type Docker from "dockerode";
import { SandboxError } from "../../errors.ts";
import type { NetworkPolicy, ProviderEventLog } from "../../provider.ts";
import { containerName, type HostPaths, labelKeys } from "./container-spec.ts";
import { mapDockerError } from "./docker-exec.ts";
import { readHostAddresses } from "./egress-proxy/host-addresses.ts";
import {
  EGRESS_PROXY_UID,
  EGRESS_SPEC,
  egressProxyCreateOptions,
  egressRules,
  HOST_ADDRESSES_DIR,
  HOST_ADDRESSES_SIDE,
  hostWatcherCreateOptions,
  networkFingerprint,
  usesEgressProxy,
} from "./network-spec.ts";

const SOURCE_DIR = fileURLToPath(new URL("./egress-proxy/", import.meta.url));

export interface EgressOptions {
  readonly docker: Docker;
  readonly image: string;
  readonly labelPrefix: string;
  /** The upstream network; made (bridge, ICC off) when missing. */
  readonly network: string;
  readonly privateAllow: readonly string[];
  /** The provider's data dir: the watcher writes `<dataDir>/run/host-addresses`. */
  readonly dataDir: string;
  readonly log: ProviderEventLog;
  /** The labels tying proxy and watcher to their deployment (deployment.ts). */
  readonly deploymentLabels?: () => Promise<Record<string, string>>;
}

export interface EgressContainers {
  /** Makes the computer's proxy match `policy` and run (or removes it under `none`). */
  ensure(computerId: string, policy: NetworkPolicy | undefined, paths: HostPaths): Promise<void>;
  stop(computerId: string): Promise<void>;
  remove(computerId: string): Promise<void>;
  /** Removes the data dir's watcher when it has no proxy left, stops it when none runs. */
  settleWatcher(): Promise<void>;
}

function statusOf(error: unknown): number | undefined {
  return (error as { statusCode?: number }).statusCode;
}

/** A proxy in these states may be deciding a request, so it needs a running watcher. */
const LIVE_STATES = new Set(["running", "paused", "restarting"]);

/** How long a new watcher may take to write its first file. */
const WATCHER_READY_MS = 15_000;

export function createEgressContainers(options: EgressOptions): EgressContainers {
  const { docker, log } = options;
  const keys = labelKeys(options.labelPrefix);

  const find = async (computerId: string): Promise<Docker.ContainerInfo[]> =>
    docker
      .listContainers({ all: true, filters: { label: [`${keys.egressOf}=${computerId}`] } })
      .catch((error: unknown) => {
        throw mapDockerError(error, computerId);
      });

  const removeAll = async (found: readonly Docker.ContainerInfo[]): Promise<void> => {
    for (const info of found) {
      await docker
        .getContainer(info.Id)
        .remove({ force: true, v: true })
        .catch((error: unknown) => {
          if (statusOf(error) !== 404) throw mapDockerError(error, info.Id);
        });
    }
  };

  /** The upstream network and the gateways on it (the host's side of the bridge). */
  const upstream = async (): Promise<string[]> => {
    const network = docker.getNetwork(options.network);
    let info: { IPAM?: { Config?: { Gateway?: string }[] } };
    try {
      info = await network.inspect();
    } catch (error) {
      if (statusOf(error) !== 404) throw mapDockerError(error, options.network);
      await docker
        .createNetwork({
          Name: options.network,
          Driver: "bridge",
          // Proxies of different computers never talk to each other.
          Options: { "com.docker.network.bridge.enable_icc": "false" },
          Labels: { ...(await options.deploymentLabels?.()), [keys.managed]: "true" },
        })
        .catch((createError: unknown) => {
          if (statusOf(createError) !== 409) throw mapDockerError(createError, options.network);
        });
      info = await docker.getNetwork(options.network).inspect();
    }
    return (info.IPAM?.Config ?? []).flatMap((entry) => (entry.Gateway ? [entry.Gateway] : []));
  };

  const prepareSocketDir = async (dir: string): Promise<void> => {
    await mkdir(dir, { recursive: true, mode: 0o755 });
    // The parent run dir is the host's; still, never chown through a link.
    if (!(await lstat(dir)).isDirectory())
      throw new SandboxError("SANDBOX_PROVIDER_ERROR", `${dir} is not a directory`);
    await chown(dir, EGRESS_PROXY_UID, EGRESS_PROXY_UID);
  };

  const watcherDir = join(options.dataDir, "run", HOST_ADDRESSES_SIDE);
  const watcherName = `${options.labelPrefix}-host-addresses-${createHash("sha256").update(watcherDir).digest("hex").slice(0, 8)}`;

  /** Until the watcher's file is there and fresh (written or touched in the last 10 s). */
  const waitForAddresses = async (): Promise<void> => {
    for (let waited = 0; waited < WATCHER_READY_MS; waited += 100) {
      const found = await stat(join(watcherDir, "addresses.json")).catch(() => null);
      if (found && Date.now() - found.mtimeMs < 10_000) return;
      await sleep(100);
    }
    throw new SandboxError(
      "SANDBOX_PROVIDER_ERROR",
      "the host-address watcher did not write the host's addresses",
    );
  };

  /** The data dir's host-address watcher runs, made from the current spec, and has written its file. */
  const ensureWatcher = async (attempts = 3): Promise<void> => {
    await prepareSocketDir(watcherDir);
    const container = docker.getContainer(watcherName);
    let info: Docker.ContainerInspectInfo | null = await container.inspect().catch((error: unknown) => {
      if (statusOf(error) !== 404) throw mapDockerError(error, watcherName);
      return null;
    });
    if (info && info.Config.Labels?.[keys.egressSpec] !== EGRESS_SPEC) {
      await container.remove({ force: true }).catch((error: unknown) => {
        if (statusOf(error) !== 404) throw mapDockerError(error, watcherName);
      });
      info = null;
    }
    if (!info) {
      const spec = hostWatcherCreateOptions({
        name: watcherName,
        image: options.image,
        labels: {
          ...(await options.deploymentLabels?.()),
          [keys.hostAddresses]: watcherDir,
          [keys.egressSpec]: EGRESS_SPEC,
          [keys.managed]: "true",
        },
        sourceDir: SOURCE_DIR,
        hostAddressesDir: watcherDir,
      });
      await docker.createContainer(spec).then(
        (made) => log({ event: "docker.egress.watcher_created", containerId: made.id }),
        (error: unknown) => {
          // A concurrent provision (or the other process on this data dir) made it.
          if (statusOf(error) !== 409) throw mapDockerError(error, watcherName);
        },
      );
    }
    if (!info?.State.Running) {
      const gone = await container.start().then(
        () => false,
        (error: unknown) => {
          // 404/409: a settle removed it (or is removing it) meanwhile: make it again.
          const status = statusOf(error);
          if (status === 304) return false;
          if ((status === 404 || status === 409) && attempts > 1) return true;
          throw mapDockerError(error, watcherName);
        },
      );
      if (gone) return ensureWatcher(attempts - 1);
    }
    await waitForAddresses();
  };

  /**
   * The data dir's proxies: those that mount its watcher's directory. The mount is exactly what
   * ties a proxy to the watcher (no label of a proxy names its data dir), in every spec so far.
   */
  const proxiesOfDataDir = async (): Promise<Docker.ContainerInfo[]> => {
    const found = await docker
      .listContainers({ all: true, filters: { label: [keys.egressOf] } })
      .catch((error: unknown) => {
        throw mapDockerError(error, watcherName);
      });
    return found.filter((info) =>
      (info.Mounts ?? []).some((m) => m.Source === watcherDir && m.Destination === HOST_ADDRESSES_DIR),
    );
  };
  const anyLive = (proxies: readonly Docker.ContainerInfo[]): boolean =>
    proxies.some((info) => LIVE_STATES.has(info.State));

  /**
   * After a proxy was stopped or removed: with no proxy left the watcher is removed, with none
   * live it is stopped (and, being stopped by hand, not brought back by an engine restart).
   *
   * Races with a provision, in this process or another one on the data dir (API and worker):
   * a provision calls `ensureWatcher` again AFTER its proxy runs, and this pass counts the live
   * proxies again AFTER its removal. Either that second count sees the new proxy (and this pass
   * brings the watcher back), or the proxy started after it, hence after the removal, and the
   * provision's own second `ensureWatcher` finds the watcher gone and makes it. So a live proxy
   * always ends with a running watcher; in the meantime its file stays fresh for 30 s.
   */
  const settleWatcher = async (): Promise<void> => {
    const proxies = await proxiesOfDataDir();
    if (anyLive(proxies)) return;
    const container = docker.getContainer(watcherName);
    const info = await container.inspect().catch((error: unknown) => {
      if (statusOf(error) !== 404) throw mapDockerError(error, watcherName);
      return null;
    });
    if (!info) return;
    if (proxies.length === 0) {
      await container.remove({ force: true, v: true }).catch((error: unknown) => {
        // 409: a removal already in progress.
        if (statusOf(error) !== 404 && statusOf(error) !== 409) throw mapDockerError(error, watcherName);
      });
      log({ event: "docker.egress.watcher_removed", containerId: info.Id });
    } else if (info.State.Running) {
      await container.stop({ t: 2 }).catch((error: unknown) => {
        if (statusOf(error) !== 304 && statusOf(error) !== 404) throw mapDockerError(error, watcherName);
      });
      log({ event: "docker.egress.watcher_stopped", containerId: info.Id });
    } else return;
    if (anyLive(await proxiesOfDataDir())) {
      log({ event: "docker.egress.watcher_restored", containerId: info.Id });
      await ensureWatcher();
    }
  };

  const waitForSocket = async (dir: string): Promise<void> => {
    for (let attempt = 0; attempt < 100; attempt += 1) {
      const found = await lstat(join(dir, "proxy.sock")).catch(() => null);
      if (found?.isSocket()) return;
      await sleep(100);
    }
    throw new SandboxError("SANDBOX_PROVIDER_ERROR", "the egress proxy did not start listening");
  };

  return {
    async ensure(computerId, policy, paths) {
      const found = await find(computerId);
      if (!usesEgressProxy(policy) || !policy) {
        await removeAll(found);
        if (found.length > 0) await settleWatcher();
        return;
      }
      const fingerprint = networkFingerprint(policy);
      const current = found.find(
        (info) => info.Labels[keys.network] === fingerprint && info.Labels[keys.egressSpec] === EGRESS_SPEC,
      );
      await removeAll(found.filter((info) => info !== current));
      await ensureWatcher();
      await prepareSocketDir(paths.egressDir);
      if (current) {
        if (current.State !== "running") {
          // A killed proxy leaves its socket; waiting must see the new one.
          await rm(join(paths.egressDir, "proxy.sock"), { force: true });
          await docker
            .getContainer(current.Id)
            .start()
            .catch((error: unknown) => {
              if (statusOf(error) !== 304) throw mapDockerError(error, current.Id);
            });
          await waitForSocket(paths.egressDir);
          // A concurrent settle may have counted no live proxy before this one started.
          await ensureWatcher();
        }
        return;
      }
      const gateways = await upstream();
      const spec = egressProxyCreateOptions({
        name: `${containerName(options.labelPrefix, computerId)}-egress`,
        image: options.image,
        labels: {
          ...(await options.deploymentLabels?.()),
          [keys.egressOf]: computerId,
          [keys.network]: fingerprint,
          [keys.egressSpec]: EGRESS_SPEC,
          [keys.managed]: "true",
        },
        rules: egressRules(policy, {
          privateAllow: options.privateAllow,
          // Beside the watcher's live list: this process's own addresses and the bridge's gateway.
          hostDeny: [...new Set([...readHostAddresses(), ...gateways])],
        }),
        network: options.network,
        sourceDir: SOURCE_DIR,
        socketDir: paths.egressDir,
        hostAddressesDir: watcherDir,
      });
      let container: Docker.Container;
      try {
        container = await docker.createContainer(spec);
      } catch (error) {
        // A concurrent provision made it: use that one.
        if (statusOf(error) === 409) return this.ensure(computerId, policy, paths);
        throw mapDockerError(error, computerId);
      }
      try {
        await container.start();
        await waitForSocket(paths.egressDir);
        // A concurrent settle may have counted no live proxy before this one started.
        await ensureWatcher();
      } catch (error) {
        await container.remove({ force: true }).catch(() => {});
        throw error instanceof SandboxError ? error : mapDockerError(error, container.id);
      }
      log({ event: "docker.egress.created", computerId, containerId: container.id, mode: policy.mode });
    },

    async stop(computerId) {
      for (const info of await find(computerId)) {
        await docker
          .getContainer(info.Id)
          .stop({ t: 2 })
          .catch((error: unknown) => {
            if (statusOf(error) !== 304 && statusOf(error) !== 404) throw mapDockerError(error, info.Id);
          });
      }
      await settleWatcher();
    },

    async remove(computerId) {
      await removeAll(await find(computerId));
      await settleWatcher();
    },

    settleWatcher,
  };
}
