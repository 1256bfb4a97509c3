/**
 * Can this process give homes disks of their own (home-disk.ts)? Asked once, by the process
 * that repairs (the worker), when the Docker provider is built: it makes a tiny image in
 * `DATA_DIR/disks`, mounts it the way a home's disk is mounted, writes a marker on it, and asks
 * the Docker engine to see that marker through a bind of the mount point. The last step is the
 * one that matters: a process in another mount namespace than the engine's (a container, even a
 * privileged one, whose DATA_DIR bind does not propagate mounts) can mount, but computers would
 * then write to the plain folder underneath while the home store reads the disk.
 *
 * The probe's paths follow settleHomeDisks' leftovers (`*.img.new`, `*.img.mnt`), so a crash in
 * the middle is cleaned up like a half-made home disk; its name has a dot, which no home key has.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdir, rm, rmdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import Docker from "dockerode";
import { SandboxError } from "../../errors.ts";
import type { DockerProviderConfig, ProviderHooks } from "../../registry.ts";
import { umountQuietly } from "./home-disk.ts";

const run = promisify(execFile);

/** Why home disks cannot be made here; stable, tests and log readers match on it. */
type HomeDiskProbeFailure =
  | "not_root"
  | "no_tools"
  | "mount_refused"
  | "not_visible_to_engine"
  | "engine_check_failed";

type HomeDiskProbe =
  | { readonly ok: true; readonly ms: number }
  | { readonly ok: false; readonly reason: HomeDiskProbeFailure; readonly detail: string };

const PROBE_BYTES = 8 * 1024 ** 2;
const PROBE_NAME = ".probe.img";

function stderrOf(error: unknown): string {
  const text = (error as { stderr?: string }).stderr || (error as Error).message || String(error);
  return text.trim().split("\n")[0] ?? "";
}

/**
 * The kernel frees an autoclear loop device after the unmount returns, not with it: the probe
 * waits (≤ 2 s) until none backs its image and detaches one still there, so it leaves nothing.
 */
async function releaseLoops(image: string): Promise<void> {
  const attached = async () =>
    (await run("losetup", ["-j", image]).catch(() => ({ stdout: "" }))).stdout.trim();
  for (let waited = 0; waited < 2_000 && (await attached()); waited += 50) await sleep(50);
  for (const line of (await attached()).split("\n").filter(Boolean)) {
    await run("losetup", ["-d", line.slice(0, line.indexOf(":"))]).catch(() => {});
  }
}

export async function probeHomeDisks(options: {
  readonly dataDir: string;
  readonly docker: Docker;
  readonly image: string;
}): Promise<HomeDiskProbe> {
  const uid = process.getuid?.();
  if (uid !== 0) {
    return { ok: false, reason: "not_root", detail: `the process runs as uid ${uid ?? "unknown"}, not root` };
  }
  const started = performance.now();
  const dir = join(options.dataDir, "disks");
  const image = join(dir, `${PROBE_NAME}.new`);
  const point = join(dir, `${PROBE_NAME}.mnt`);
  const marker = `probe-${randomBytes(8).toString("hex")}`;
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await umountQuietly(point);
  try {
    try {
      await run("truncate", ["-s", String(PROBE_BYTES), image]);
      await run("mkfs.ext4", ["-q", "-F", "-m", "0", image]);
    } catch (error) {
      return { ok: false, reason: "no_tools", detail: stderrOf(error) };
    }
    await mkdir(point, { recursive: true, mode: 0o700 });
    try {
      await run("mount", ["-o", "loop,nosuid,nodev,noatime", image, point]);
    } catch (error) {
      return { ok: false, reason: "mount_refused", detail: stderrOf(error) };
    }
    await writeFile(join(point, marker), "");
    return await engineSees(options, point, marker, started);
  } finally {
    await umountQuietly(point).catch(() => {});
    await rmdir(point).catch(() => {});
    await releaseLoops(image);
    await rm(image, { force: true });
  }
}

/** A throwaway container (no network, read-only bind) tests for the marker where the engine binds. */
async function engineSees(
  options: { readonly docker: Docker; readonly image: string },
  point: string,
  marker: string,
  started: number,
): Promise<HomeDiskProbe> {
  let container: Docker.Container | undefined;
  try {
    container = await options.docker.createContainer({
      Image: options.image,
      Entrypoint: ["test", "-e", `/probe/${marker}`],
      Cmd: [],
      User: "0",
      NetworkDisabled: true,
      HostConfig: { Binds: [`${point}:/probe:ro`], NetworkMode: "none", ReadonlyRootfs: true },
    });
    await container.start();
    const { StatusCode } = (await container.wait()) as { StatusCode: number };
    if (StatusCode === 0) return { ok: true, ms: Math.round(performance.now() - started) };
    return {
      ok: false,
      reason: "not_visible_to_engine",
      detail:
        "a disk mounted by this process is not seen where the Docker engine resolves DATA_DIR (another mount namespace, e.g. a container)",
    };
  } catch (error) {
    return { ok: false, reason: "engine_check_failed", detail: stderrOf(error) };
  } finally {
    await container?.remove({ force: true }).catch(() => {});
  }
}

/**
 * Whether this process's Docker provider keeps home disks (`RAKAZO_DOCKER_HOME_DISKS`):
 * `on` must work here (else the provider is not built, with a stable error), `auto` works when
 * the probe passes and is off otherwise with one warning event naming the reason. A process
 * that does not repair (the API) never probes nor mounts: it keeps the setting and reads a
 * home's usage only where a disk is mounted (`homeDisks.usage` is null elsewhere), so it agrees
 * with whatever the worker decided.
 */
export async function resolveHomeDisks(config: DockerProviderConfig, hooks: ProviderHooks): Promise<boolean> {
  const setting = config.homeDisks;
  if (setting === undefined) return false;
  if (hooks.repairs === false) return true;
  const docker = new Docker({ socketPath: config.socketPath ?? "/var/run/docker.sock" });
  const probe = await probeHomeDisks({ dataDir: config.dataDir, docker, image: config.image });
  if (probe.ok) return true;
  if (setting === "on") {
    throw new SandboxError(
      "SANDBOX_PROVIDER_ERROR",
      `RAKAZO_DOCKER_HOME_DISKS=on, but home disks cannot be made here (${probe.reason}): ${probe.detail}`,
      { details: { reason: "home_disks_unavailable", probe: probe.reason } },
    );
  }
  hooks.log?.({
    event: "docker.home_disks.unavailable",
    setting: "RAKAZO_DOCKER_HOME_DISKS=auto",
    homeDisks: "off",
    reason: probe.reason,
    detail: probe.detail,
  });
  return false;
}
