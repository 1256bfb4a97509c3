/**
 * Bounded homes: each home lives on its own ext4 filesystem, a sparse image file
 * `<dataDir>/disks/<home key>.img` loop-mounted over `<dataDir>/homes/<home key>` (the path the
 * home store and the container's bind mount already use). A full home is ENOSPC inside that
 * filesystem only; the host's free space drops by at most the image's size.
 *
 * `disks/` is host-owned (0700) and never mounted into a computer. The host never follows a
 * path the computer wrote: the image and mount point are paths the host made, and contents
 * are moved into a new disk with `cp -a` (symlinks copied as symlinks, never followed) onto a
 * filesystem mounted nosuid,nodev. `mount -o loop` sets the loop device's autoclear flag, so an
 * unmount releases the device; `settleHomeDisks` finds what a crash left behind.
 */
import { execFile } from "node:child_process";
import { lstat, mkdir, readdir, readFile, rename, rm, rmdir, stat, statfs } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { SandboxError } from "../../errors.ts";
import type { HomeDiskUsage, ProviderHomeDisks } from "../../provider.ts";
import { hostPaths } from "./container-spec.ts";

const run = promisify(execFile);

export const DEFAULT_DISK_BYTES = 10 * 1024 ** 3;
const MOUNT_OPTIONS = "loop,nosuid,nodev,noatime";

function disksDir(dataDir: string): string {
  return join(dataDir, "disks");
}

function imageOf(dataDir: string, homeKey: string): string {
  return join(disksDir(dataDir), `${homeKey}.img`);
}

/** The mount points under `prefix` (octal escapes of /proc/self/mountinfo decoded). */
async function mountPoints(prefix: string): Promise<Set<string>> {
  const info = await readFile("/proc/self/mountinfo", "utf8");
  const points = new Set<string>();
  for (const line of info.split("\n")) {
    const field = line.split(" ")[4];
    if (!field) continue;
    const point = field.replace(/\\([0-7]{3})/g, (_, octal: string) =>
      String.fromCharCode(Number.parseInt(octal, 8)),
    );
    if (point === prefix || point.startsWith(`${prefix}/`)) points.add(point);
  }
  return points;
}

export async function isAttached(homeDir: string): Promise<boolean> {
  return (await mountPoints(homeDir)).has(homeDir);
}

async function exists(path: string): Promise<boolean> {
  return lstat(path).then(
    () => true,
    () => false,
  );
}

/** A new image at `size` under `target`, holding what `fromDir` holds (if anything). */
async function makeImage(target: string, size: number, fromDir: string | null): Promise<void> {
  const draft = `${target}.new`;
  const staging = `${target}.mnt`;
  await umountQuietly(staging);
  await rm(draft, { force: true });
  // Sparse: the host's disk holds only what the home writes.
  await run("truncate", ["-s", String(size), draft]);
  // No reserved blocks (the workspace user gets all of it); the root dir belongs to the user.
  await run("mkfs.ext4", ["-q", "-F", "-m", "0", "-L", "rakazo-home", "-E", "root_owner=1000:1000", draft]);
  await mkdir(staging, { recursive: true, mode: 0o700 });
  await run("mount", ["-o", MOUNT_OPTIONS, draft, staging]);
  try {
    // The workspace export runs as the user: a root-only lost+found would fail it.
    await rmdir(join(staging, "lost+found"));
    if (fromDir) await run("cp", ["-a", "--", `${fromDir}/.`, `${staging}/`]);
  } catch (error) {
    await umountQuietly(staging);
    await rm(draft, { force: true });
    const full = String((error as { stderr?: string }).stderr ?? "").includes("No space left");
    throw new SandboxError(
      "SANDBOX_PROVIDER_ERROR",
      full ? `the home holds more than its disk size of ${size} bytes` : "could not fill the home's disk",
      { cause: error, ...(full ? { details: { reason: "disk_too_small", sizeBytes: size } } : {}) },
    );
  }
  await run("umount", [staging]);
  await rmdir(staging).catch(() => {});
  await rename(draft, target);
}

export async function umountQuietly(point: string): Promise<void> {
  if (await isAttached(point)) await run("umount", [point]).catch(() => run("umount", ["-l", point]));
}

/**
 * Mounts the home's disk over `homeDir`, first making the disk at `sizeBytes` when it has none.
 * Files already in the plain `homeDir` (a home restored or moved here while no disk was
 * mounted, or one from before disks) are newer than any disk: they are moved onto a new one.
 * A disk smaller than `sizeBytes` is grown; a larger one is kept (its files may not fit).
 * Returns whether it mounted now (a running container then needs a restart to see it).
 */
export function attachHomeDisk(
  dataDir: string,
  homeKey: string,
  homeDir: string,
  sizeBytes: number,
): Promise<{ readonly mounted: boolean }> {
  return serialized(homeDir, () => attachNow(dataDir, homeKey, homeDir, sizeBytes));
}

/** One mount change at a time per home in this process: two at once would mount it twice. */
const pending = new Map<string, Promise<unknown>>();
function serialized<T>(homeDir: string, fn: () => Promise<T>): Promise<T> {
  const run = (pending.get(homeDir) ?? Promise.resolve()).catch(() => {}).then(fn);
  pending.set(homeDir, run);
  void run
    .finally(() => {
      if (pending.get(homeDir) === run) pending.delete(homeDir);
    })
    .catch(() => {});
  return run;
}

async function attachNow(
  dataDir: string,
  homeKey: string,
  homeDir: string,
  sizeBytes: number,
): Promise<{ readonly mounted: boolean }> {
  const image = imageOf(dataDir, homeKey);
  if (await isAttached(homeDir)) {
    await grow(image, homeDir, sizeBytes);
    return { mounted: false };
  }
  await mkdir(disksDir(dataDir), { recursive: true, mode: 0o700 });
  const plain = (await readdir(homeDir)).length > 0;
  if (plain || !(await exists(image))) {
    await makeImage(image, sizeBytes, plain ? homeDir : null);
    // Only once the disk holds them: a crash before leaves them here, and they are moved again.
    for (const name of await readdir(homeDir))
      await rm(join(homeDir, name), { recursive: true, force: true });
  }
  await run("mount", ["-o", MOUNT_OPTIONS, image, homeDir]);
  await grow(image, homeDir, sizeBytes);
  return { mounted: true };
}

async function grow(image: string, homeDir: string, sizeBytes: number): Promise<void> {
  if ((await stat(image)).size >= sizeBytes) return;
  await run("truncate", ["-s", String(sizeBytes), image]);
  const device = (await run("findmnt", ["-n", "-o", "SOURCE", "--mountpoint", homeDir])).stdout.trim();
  await run("losetup", ["-c", device]);
  await run("resize2fs", [device]);
}

/** Unmounts the home's disk (the loop device goes with it); a no-op when none is mounted. */
function detachHomeDisk(homeDir: string): Promise<void> {
  return serialized(homeDir, () => detachNow(homeDir));
}

async function detachNow(homeDir: string): Promise<void> {
  if (!(await isAttached(homeDir))) return;
  try {
    await run("umount", [homeDir]);
  } catch (error) {
    // Busy (a host process inside it): detach now, the kernel releases it when it leaves.
    await run("umount", ["-l", homeDir]).catch(() => {
      throw new SandboxError("SANDBOX_PROVIDER_ERROR", "could not unmount the home's disk", { cause: error });
    });
  }
}

/** Used and total bytes of the home's filesystem; null when no disk is mounted there. */
async function homeDiskUsage(homeDir: string): Promise<HomeDiskUsage | null> {
  if (!(await isAttached(homeDir))) return null;
  const fs = await statfs(homeDir);
  return { usedBytes: (fs.blocks - fs.bfree) * fs.bsize, sizeBytes: fs.blocks * fs.bsize };
}

/**
 * After a crash or restart: unmounts half-made disks (`*.img.mnt`), drops unfinished images
 * (`*.img.new`) and detaches loop devices of this data dir's disks that nothing mounts, then
 * mounts every disk whose home still exists (the home store reads homes in place, stopped
 * computers' too) and deletes disks whose home the store removed.
 */
export async function settleHomeDisks(dataDir: string): Promise<void> {
  const dir = disksDir(dataDir);
  const names = await readdir(dir).catch(() => [] as string[]);
  for (const name of names) {
    const path = join(dir, name);
    if (name.endsWith(".img.mnt")) {
      await umountQuietly(path);
      await rm(path, { recursive: true, force: true });
    } else if (name.endsWith(".img.new")) await rm(path, { force: true });
  }
  await releaseUnmountedLoops(dir);
  for (const name of names) {
    if (!name.endsWith(".img")) continue;
    const homeKey = name.slice(0, -".img".length);
    const homeDir = join(dataDir, "homes", homeKey);
    if (!(await exists(homeDir))) await rm(join(dir, name), { force: true });
    else await attachHomeDisk(dataDir, homeKey, homeDir, (await stat(join(dir, name))).size);
  }
}

/** Loop devices backed by a file in `dir` that no mount uses (a crash between losetup and mount). */
async function releaseUnmountedLoops(dir: string): Promise<void> {
  const { stdout } = await run("losetup", ["-J", "-l"]).catch(() => ({ stdout: "" }));
  if (!stdout.trim()) return;
  const devices = (JSON.parse(stdout) as { loopdevices: { name: string; "back-file": string | null }[] })
    .loopdevices;
  const mounted = (await readFile("/proc/self/mountinfo", "utf8"))
    .split("\n")
    .map((line) => line.split(" - ")[1]?.split(" ")[1]);
  for (const device of devices) {
    const backing = device["back-file"]?.replace(/ \(deleted\)$/, "");
    if (!backing?.startsWith(`${dir}/`)) continue;
    if (mounted.includes(device.name)) continue;
    await run("losetup", ["-d", device.name]).catch(() => {});
  }
}

/** The provider's `homeDisks` (provider.ts) over `<dataDir>/homes`. */
export function createHomeDisks(dataDir: string): ProviderHomeDisks {
  // hostPaths refuses a home key that could leave `homes/`.
  const homeDir = (homeKey: string) => hostPaths(dataDir, "", homeKey).homeDir;
  return {
    usage: (homeKey) => homeDiskUsage(homeDir(homeKey)),
    detach: (homeKey) => detachHomeDisk(homeDir(homeKey)),
    async remove(homeKey) {
      await detachHomeDisk(homeDir(homeKey));
      const image = imageOf(dataDir, homeKey);
      await umountQuietly(`${image}.mnt`);
      for (const path of [image, `${image}.new`, `${image}.mnt`])
        await rm(path, { recursive: true, force: true });
    },
  };
}
