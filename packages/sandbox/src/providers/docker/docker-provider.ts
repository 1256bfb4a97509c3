/**
 * The Docker adapter of `SandboxProvider` (PRV-1, PRV-5): one container per computer, created
 * from the computer image with networking off, the Rakazo-owned home bind-mounted as the
 * workspace and a per-computer runtime directory for the supervisor's Unix sockets.
 * Invariants are listed in README.md beside this file.
 */
import { chown, lstat, mkdir, rm } from "node:fs/promises";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import Docker from "dockerode";
import { SandboxError } from "../../errors.ts";
import type {
  ProviderCapabilities,
  ProvisionRequest,
  ProvisionResult,
  Sandbox,
  SandboxProvider,
  SandboxStatus,
} from "../../provider.ts";
import {
  computerFilter,
  containerCreateOptions,
  DEFAULT_LABEL_PREFIX,
  DEFAULT_MEMORY_BYTES,
  DEFAULT_NANO_CPUS,
  DEFAULT_PIDS_LIMIT,
  DEFAULT_RUNTIME,
  type HostPaths,
  hostPaths,
  labelKeys,
  RUNTIME_DIR,
  runDirFor,
  stopGraceSeconds,
  WORKSPACE_GID,
  WORKSPACE_UID,
} from "./container-spec.ts";
import { deploymentLabels } from "./deployment.ts";
import { withDiskAdmission } from "./disk-admission.ts";
import { mapDockerError, runExec } from "./docker-exec.ts";
import type { DockerDesktopContext, DockerProviderOptions } from "./docker-options.ts";
import { createEgressContainers } from "./egress-container.ts";
import { attachHomeDisk, createHomeDisks, DEFAULT_DISK_BYTES, isAttached } from "./home-disk.ts";
import { COMPUTER_SIDE, createSocketExposer, prepareRunDir } from "./host-sockets.ts";
import {
  DEFAULT_EGRESS_NETWORK,
  networkFingerprint,
  relayReadyArgv,
  usesEgressProxy,
} from "./network-spec.ts";
import { createExec } from "./provider-exec.ts";
import { createWorkspaceFiles } from "./workspace-files.ts";

interface RunDirs {
  readonly computerRunDir: string;
  readonly runDir: string;
  readonly computerId: string;
  readonly homeKey: string;
}

export function createDockerProvider(options: DockerProviderOptions): SandboxProvider {
  const docker = options.docker ?? new Docker({ socketPath: "/var/run/docker.sock" });
  const prefix = options.labelPrefix ?? DEFAULT_LABEL_PREFIX;
  const keys = labelKeys(prefix);
  const log = options.log ?? (() => {});
  const capabilities: ProviderCapabilities = {
    desktop: options.desktop !== undefined,
    pageBrowser: options.pageBrowser !== undefined,
    terminal: options.terminal !== undefined,
    billsWhileRunning: false,
    // The container mounts DATA_DIR/homes/<home key> and runs as the workspace user (PRV-5).
    mountsHome: true,
    homeOwner: { uid: WORKSPACE_UID, gid: WORKSPACE_GID },
    defaultPageBrowser: "sandbox",
    networkModes: ["none", "egress", "allowlist"],
  };
  // Looked up once, at the first container this provider makes.
  let labels: Promise<Record<string, string>> | undefined;
  const ownLabels = () => {
    labels ??= deploymentLabels(docker, { labelPrefix: prefix, dataDir: options.dataDir });
    return labels;
  };
  const egress = createEgressContainers({
    docker,
    deploymentLabels: ownLabels,
    image: options.image,
    labelPrefix: prefix,
    network: options.egressNetwork ?? DEFAULT_EGRESS_NETWORK,
    privateAllow: options.egressPrivateAllow ?? [],
    dataDir: options.dataDir,
    log,
  });

  /** Under egress/allowlist: returns once the computer's relay to its proxy listens (or logs why not). */
  const awaitRelay = async (ref: string, request: ProvisionRequest): Promise<void> => {
    if (!usesEgressProxy(request.network)) return;
    const result = await runExec(docker, ref, {
      argv: relayReadyArgv(30),
      cwd: "/",
      timeoutMs: 40_000,
    }).catch(() => null);
    if (result?.exitCode !== 0) {
      log({ event: "docker.egress.relay_not_ready", computerId: request.computerId, containerId: ref });
    }
  };

  const inspect = async (ref: string): Promise<Docker.ContainerInspectInfo | null> => {
    try {
      return await docker.getContainer(ref).inspect();
    } catch (error) {
      if ((error as { statusCode?: number }).statusCode === 404) return null;
      throw mapDockerError(error, ref);
    }
  };

  /**
   * Host directories must exist before the container starts: the home (owner: the workspace
   * user) and the run dir (host-owned, with the computer's side owned by the workspace user).
   */
  const prepareHostDirs = async (paths: HostPaths, request: ProvisionRequest): Promise<void> => {
    await mkdir(paths.homeDir, { recursive: true, mode: 0o755 });
    // The home is a mount source the computer cannot replace, but never chown through a link.
    if (!(await lstat(paths.homeDir)).isDirectory()) {
      throw new SandboxError("SANDBOX_PROVIDER_ERROR", `${paths.homeDir} is not a directory`);
    }
    await chown(paths.homeDir, WORKSPACE_UID, WORKSPACE_GID);
    if (options.homeDisks) {
      const size = request.sizing?.diskBytes ?? options.diskBytes ?? DEFAULT_DISK_BYTES;
      await attachHomeDisk(options.dataDir, request.homeKey, paths.homeDir, size);
    }
    await prepareRunDir(paths.runDir, { uid: WORKSPACE_UID, gid: WORKSPACE_GID });
  };

  /** Starts (or unpauses) a container of this computer; `null` when it cannot be used again. */
  const reuse = async (
    info: Docker.ContainerInspectInfo,
    request: ProvisionRequest,
    paths: HostPaths,
  ): Promise<string | null> => {
    const labels = info.Config.Labels ?? {};
    if (labels[keys.computer] !== request.computerId) return null;
    const runMount = info.Mounts.find((m) => m.Destination === RUNTIME_DIR && m.Type === "bind");
    if (
      labels[keys.home] !== request.homeKey ||
      // Another network policy: its environment and mounts are fixed at create.
      (labels[keys.network] ?? "none") !== networkFingerprint(request.network) ||
      runMount?.Source !== paths.computerRunDir ||
      // Made under another OCI runtime (RAKAZO_DOCKER_RUNTIME changed).
      (info.HostConfig?.Runtime ?? DEFAULT_RUNTIME) !== (options.runtime ?? DEFAULT_RUNTIME) ||
      // Made before the system was read-only (system-fs.ts).
      info.HostConfig?.ReadonlyRootfs !== true ||
      // Runs on the plain folder: its disk was not mounted when it started.
      (options.homeDisks && info.State.Running && !(await isAttached(paths.homeDir))) ||
      info.State.Dead ||
      info.State.Status === "removing"
    ) {
      // Mounts the wrong home, has an older run dir layout (the whole run dir writable by the
      // computer) or cannot start again: replace it.
      log({ event: "docker.container.discarded", computerId: request.computerId, containerId: info.Id });
      await docker
        .getContainer(info.Id)
        .remove({ force: true, v: true })
        .catch(() => {});
      return null;
    }
    const container = docker.getContainer(info.Id);
    try {
      if (info.State.Paused) await container.unpause();
      else if (!info.State.Running) {
        await prepareHostDirs(paths, request);
        await container.start();
        log({ event: "docker.container.started", computerId: request.computerId, containerId: info.Id });
        await awaitRelay(info.Id, request);
      }
    } catch (error) {
      // 304: it was started concurrently.
      if ((error as { statusCode?: number }).statusCode !== 304) throw mapDockerError(error, info.Id);
    }
    return info.Id;
  };

  const findByLabel = async (computerId: string): Promise<Docker.ContainerInspectInfo | null> => {
    const found = await docker
      .listContainers({ all: true, filters: computerFilter(prefix, computerId) })
      .catch((error: unknown) => {
        throw mapDockerError(error, computerId);
      });
    found.sort((a, b) => b.Created - a.Created);
    for (const summary of found) {
      const info = await inspect(summary.Id);
      if (info) return info;
    }
    return null;
  };

  const runDirsByRef = new Map<string, RunDirs>();
  // The computers' sockets, linked once per supervisor start and re-checked by inode per call.
  const sockets = createSocketExposer();

  const provider: SandboxProvider = {
    kind: "docker",
    capabilities,
    ...(options.homeDisks ? { homeDisks: createHomeDisks(options.dataDir) } : {}),

    async provision(request): Promise<ProvisionResult> {
      const paths = hostPaths(options.dataDir, request.computerId, request.homeKey);
      // The egress proxy listens before the computer starts, so its first request finds it.
      if (usesEgressProxy(request.network)) await prepareHostDirs(paths, request);
      await egress.ensure(request.computerId, request.network, paths);
      if (request.ref) {
        const info = await inspect(request.ref);
        const ref = info ? await reuse(info, request, paths) : null;
        if (ref) return { ref, replaced: false };
      }
      const existing = await findByLabel(request.computerId);
      const found = existing ? await reuse(existing, request, paths) : null;
      if (found) return { ref: found, replaced: false };

      await prepareHostDirs(paths, request);
      const spec = containerCreateOptions({
        image: options.image,
        computerId: request.computerId,
        homeKey: request.homeKey,
        paths,
        labelPrefix: prefix,
        memoryBytes: request.sizing?.memoryBytes ?? options.memoryBytes ?? DEFAULT_MEMORY_BYTES,
        pidsLimit: request.sizing?.pidsLimit ?? options.pidsLimit ?? DEFAULT_PIDS_LIMIT,
        // The engine refuses more CPUs than the host has; this engine is the local one.
        nanoCpus: Math.min(
          request.sizing?.nanoCpus ?? options.nanoCpus ?? DEFAULT_NANO_CPUS,
          availableParallelism() * 1_000_000_000,
        ),
        ...(options.command ? { command: options.command } : {}),
        ...(options.environment ? { environment: options.environment } : {}),
        ...(request.network ? { network: request.network } : {}),
        deploymentLabels: await ownLabels(),
        ...(options.runtime ? { runtime: options.runtime } : {}),
      });
      let container: Docker.Container;
      try {
        container = await docker.createContainer(spec);
      } catch (error) {
        // The name is derived from the computer id: a 409 means a concurrent provision won.
        if ((error as { statusCode?: number }).statusCode === 409) {
          const winner = await findByLabel(request.computerId);
          const ref = winner ? await reuse(winner, request, paths) : null;
          if (ref) return { ref, replaced: false };
        }
        throw mapDockerError(error, request.computerId);
      }
      try {
        await container.start();
      } catch (error) {
        await container.remove({ force: true }).catch(() => {});
        throw mapDockerError(error, container.id);
      }
      log({ event: "docker.container.created", computerId: request.computerId, containerId: container.id });
      await awaitRelay(container.id, request);
      return { ref: container.id, replaced: true };
    },

    async stop(ref, stopOptions) {
      let computerId = runDirsByRef.get(ref)?.computerId;
      try {
        const container = docker.getContainer(ref);
        computerId ??= (await container.inspect()).Config.Labels?.[keys.computer];
        await container.stop({ t: stopGraceSeconds(stopOptions) });
      } catch (error) {
        // 304: already stopped.
        if ((error as { statusCode?: number }).statusCode !== 304) throw mapDockerError(error, ref);
      }
      if (computerId) await egress.stop(computerId);
      log({ event: "docker.container.stopped", containerId: ref });
    },

    async destroy(ref) {
      runDirsByRef.delete(ref);
      const info = await inspect(ref);
      // A destroy retried after failing past the machine's removal still lets the watcher go.
      if (!info) return egress.settleWatcher();
      try {
        await docker.getContainer(ref).remove({ force: true, v: true });
      } catch (error) {
        const status = (error as { statusCode?: number }).statusCode;
        if (status !== 404) throw mapDockerError(error, ref);
      }
      // The runtime dir is this provider's; the home belongs to the home store and stays.
      const computerId = info.Config.Labels?.[keys.computer];
      if (computerId) await egress.remove(computerId);
      if (computerId) {
        sockets.forget(runDirFor(options.dataDir, computerId));
        await rm(runDirFor(options.dataDir, computerId), { recursive: true, force: true });
      }
      log({ event: "docker.container.removed", computerId, containerId: info.Id });
    },

    async status(ref): Promise<SandboxStatus> {
      const info = await inspect(ref);
      if (!info) return "missing";
      return info.State.Running && !info.State.Paused ? "running" : "stopped";
    },

    sandbox(ref): Sandbox {
      const handle: { -readonly [K in keyof Sandbox]: Sandbox[K] } = {
        ref,
        // Through the supervisor when it listens; `context.exec` stays `docker exec`,
        // which is how the supervisor itself gets started.
        exec: createExec(
          docker,
          ref,
          options.execThroughSupervisor ? () => context.hostSocket("supervisor.sock") : undefined,
        ),
        files: createWorkspaceFiles(docker, ref),
      };
      /** The computer's run dirs, from the engine's record of its mount (never from the computer). */
      const runDirs = async (): Promise<RunDirs> => {
        // A container's mounts never change: one inspect per container, not one per call.
        const known = runDirsByRef.get(ref);
        if (known) return known;
        const info = await inspect(ref);
        if (!info) throw new SandboxError("SANDBOX_GONE", `container ${ref} does not exist`);
        const computerId = info.Config.Labels?.[keys.computer] ?? "";
        const expected = computerId ? join(runDirFor(options.dataDir, computerId), COMPUTER_SIDE) : "";
        const mount = info.Mounts.find((m) => m.Destination === RUNTIME_DIR && m.Type === "bind");
        if (!mount || mount.Source !== expected) {
          throw new SandboxError(
            "SANDBOX_PROVIDER_ERROR",
            `container ${ref} does not mount its own run dir at ${RUNTIME_DIR} (provision it again)`,
          );
        }
        const dirs = {
          computerRunDir: mount.Source,
          runDir: runDirFor(options.dataDir, computerId),
          computerId,
          homeKey: info.Config.Labels?.[keys.home] ?? "",
        };
        if (runDirsByRef.size > 1_000) runDirsByRef.clear();
        runDirsByRef.set(ref, dirs);
        return dirs;
      };
      const context: DockerDesktopContext = {
        ref,
        exec: createExec(docker, ref),
        hostRuntimeDir: async () => (await runDirs()).computerRunDir,
        hostSocket: async (name) => {
          const { runDir, computerId } = await runDirs();
          return sockets.expose(runDir, name, (reason) =>
            log({ event: "docker.socket.refused", computerId, containerId: ref, socket: name, reason }),
          );
        },
      };
      if (options.screens) handle.screens = options.screens(context);
      if (options.terminal) Object.assign(handle, options.terminal(context));
      if (options.pageBrowser) handle.pageBrowser = options.pageBrowser(context);
      if (options.desktop) {
        const desktop = options.desktop(context);
        // A new desktop needs room for its browser profile on the home's disk (disk-admission.ts).
        const homeDir = async () => hostPaths(options.dataDir, ref, (await runDirs()).homeKey).homeDir;
        handle.desktop = options.homeDisks ? withDiskAdmission(desktop, homeDir) : desktop;
      }
      if (options.processes) handle.processes = options.processes(context);
      return handle;
    },
  };
  return provider;
}
