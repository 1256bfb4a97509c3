/**
 * Which deployment a container belongs to. Every computer container, egress proxy and
 * host-address watcher carries `<prefix>.data-dir=<absolute DATA_DIR>` and, when the process
 * that made it runs under Docker Compose, `<prefix>.compose-project=<project>` (read from its
 * own container's labels). So what a stack leaves behind can be found after its control plane
 * (or its database) is gone: `./rakazo status` lists a data dir's computers still running, and
 * `docker ps --filter label=rakazo.compose-project=<project>` a compose project's.
 */
import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import Docker from "dockerode";
import { labelKeys } from "./container-spec.ts";
import { mapDockerError } from "./docker-exec.ts";

const COMPOSE_PROJECT = "com.docker.compose.project";

/**
 * The id of the container this process runs in, from the engine's bind mounts of its own
 * `/etc/hostname` (`/var/lib/docker/containers/<id>/hostname`); undefined outside a container.
 */
export async function ownContainerId(mountinfo = "/proc/self/mountinfo"): Promise<string | undefined> {
  const text = await readFile(mountinfo, "utf8").catch(() => "");
  return /\/containers\/([0-9a-f]{64})\/(?:hostname|hosts|resolv\.conf)\s/.exec(text)?.[1];
}

/** The labels that tie a container to this deployment (see the header). */
export async function deploymentLabels(
  docker: Docker,
  options: { labelPrefix: string; dataDir: string },
): Promise<Record<string, string>> {
  const keys = labelKeys(options.labelPrefix);
  const labels: Record<string, string> = { [keys.dataDir]: resolve(options.dataDir) };
  const self = await ownContainerId();
  if (self) {
    const info = await docker
      .getContainer(self)
      .inspect()
      .catch(() => null);
    const project = info?.Config.Labels?.[COMPOSE_PROJECT];
    if (project) labels[keys.composeProject] = project;
  }
  return labels;
}

export interface DeploymentContainer {
  readonly containerId: string;
  readonly name: string;
  /** The computer a computer container or egress proxy belongs to; absent on the watcher. */
  readonly computerId?: string;
  readonly role: "computer" | "egress-proxy" | "host-address-watcher";
  /** Docker's state: running, exited, paused, … */
  readonly state: string;
}

/** Every container (running or not) this data dir's deployment made, found by its label. */
export async function listDeploymentContainers(options: {
  readonly dataDir: string;
  readonly labelPrefix?: string;
  readonly socketPath?: string;
  readonly docker?: Docker;
}): Promise<DeploymentContainer[]> {
  const docker = options.docker ?? new Docker({ socketPath: options.socketPath ?? "/var/run/docker.sock" });
  const keys = labelKeys(options.labelPrefix ?? "rakazo");
  const found = await docker
    .listContainers({ all: true, filters: { label: [`${keys.dataDir}=${resolve(options.dataDir)}`] } })
    .catch((error: unknown) => {
      throw mapDockerError(error, options.dataDir);
    });
  return found.map((info) => {
    const egressOf = info.Labels[keys.egressOf];
    const computerId = egressOf ?? info.Labels[keys.computer];
    return {
      containerId: info.Id,
      name: (info.Names[0] ?? "").replace(/^\//, ""),
      ...(computerId ? { computerId } : {}),
      role: egressOf ? "egress-proxy" : computerId ? "computer" : "host-address-watcher",
      state: info.State,
    };
  });
}
