/**
 * The computer's filesystem outside the workspace: the image's system is mounted read-only
 * (PER-1: it is disposable, and a write there would be lost on replacement anyway), and the
 * places tools write scratch to are size-limited tmpfs mounts. tmpfs pages are charged to the
 * container's memory cgroup, so scratch is counted in the computer's memory and never lands on
 * the host's disk. Writable in a computer: the home (its own disk, home-disk.ts), these scratch
 * mounts, `/dev/shm` (ShmSize) and the run dir (`/run/rakazo`).
 */

/** Scratch mount → the share of the computer's memory it may hold at most. */
const SCRATCH = [
  // Xvfb's lock files and X11 sockets, Chromium's and every tool's temp files.
  { path: "/tmp", share: 1 / 4, mode: "1777", owner: false },
  { path: "/var/tmp", share: 1 / 8, mode: "1777", owner: false },
  // HOME (the image's /home/user): the tools' ~/.cache, ~/.config, ~/.pki outside the
  // workspace. The workspace is a bind mount inside it. The image's dotfiles are hidden;
  // /etc/bash.bashrc and /etc/profile still apply.
  { path: "/home/user", share: 1 / 8, mode: "0755", owner: true },
  // lockfile(1) and friends.
  { path: "/run/lock", share: 0, mode: "1777", owner: false },
] as const;

const MIB = 1024 ** 2;

/** `HostConfig.Tmpfs` for a computer of `memoryBytes`: every scratch mount sized, nosuid, nodev. */
export function scratchTmpfs(
  memoryBytes: number,
  owner: { uid: number; gid: number },
): Record<string, string> {
  const mounts: Record<string, string> = {};
  for (const mount of SCRATCH) {
    const size =
      mount.share === 0 ? MIB : Math.max(16 * MIB, Math.floor((memoryBytes * mount.share) / MIB) * MIB);
    const ids = mount.owner ? `,uid=${owner.uid},gid=${owner.gid}` : "";
    mounts[mount.path] = `rw,nosuid,nodev,size=${size},mode=${mount.mode}${ids}`;
  }
  return mounts;
}
