/**
 * The per-computer egress proxy container's lifecycle (issue 16): made, started, stopped and
 * removed beside its computer, on the deployment's upstream network. Its decisions live in
 * egress-proxy/; its create options in network-spec.ts.
 */
import { chown, lstat, mkdir, rm } from "node:fs/promises";
import { networkInterfaces } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import type Docker from "dockerode";
import { SandboxError } from "../../errors.ts";
import type { NetworkPolicy, ProviderEventLog } from "../../provider.ts";
import { containerName, type HostPaths, labelKeys } from "./container-spec.ts";
import { mapDockerError } from "./docker-exec.ts";
import {
  EGRESS_PROXY_UID,
  egressProxyCreateOptions,
  egressRules,
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
  readonly log: ProviderEventLog;
}

export interface EgressContainers {
  /** Makes the computer's proxy match `policy` and run (or removes it under `none`). */
  ensure(computerId: string, policy: NetworkPolicy | undefined, paths: HostPaths): Promise<void>;
  stop(computerId: string): Promise<void>;
  remove(computerId: string): Promise<void>;
}

function statusOf(error: unknown): number | undefined {
  return (error as { statusCode?: number }).statusCode;
}

/** Every address of this host (the engine is local): the proxy refuses them all. */
function hostAddresses(): string[] {
  return Object.values(networkInterfaces())
    .flatMap((list) => list ?? [])
    .map((entry) => entry.address.replace(/%.*$/, ""));
}

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
          Labels: { [keys.managed]: "true" },
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
        return;
      }
      const fingerprint = networkFingerprint(policy);
      const current = found.find((info) => info.Labels[keys.network] === fingerprint);
      await removeAll(found.filter((info) => info !== current));
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
        }
        return;
      }
      const gateways = await upstream();
      const spec = egressProxyCreateOptions({
        name: `${containerName(options.labelPrefix, computerId)}-egress`,
        image: options.image,
        labels: { [keys.egressOf]: computerId, [keys.network]: fingerprint, [keys.managed]: "true" },
        rules: egressRules(policy, {
          privateAllow: options.privateAllow,
          hostDeny: [...new Set([...hostAddresses(), ...gateways])],
        }),
        network: options.network,
        sourceDir: SOURCE_DIR,
        socketDir: paths.egressDir,
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
    },

    async remove(computerId) {
      await removeAll(await find(computerId));
    },
  };
}
