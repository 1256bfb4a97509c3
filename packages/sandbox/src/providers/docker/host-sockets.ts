/**
 * How the host reaches a Docker computer's Unix sockets without letting the computer steer it
 * (docs/security.md).
 *
 * Layout, per computer: `<dataDir>/run/<slug>/` belongs to the host (this process's uid, mode
 * 0755) and is never mounted; its child `computer/` (owner 1000) is the computer's `/run/rakazo`,
 * where the supervisor creates `supervisor.sock` and `gateway.sock`. The computer can rename,
 * replace or symlink anything in `computer/`, so the host never connects there. Instead, before
 * its first use (and again whenever it changed, below), it hard-links the computer's socket into
 * the host-owned directory:
 *
 * 1. every directory from `<dataDir>/run` down to `<slug>/computer` is `lstat`-ed: a real
 *    directory (no symlink), and the host-owned ones are owned by us and not group/other
 *    writable — so nothing the computer writes is on the path;
 * 2. `link(computer/<name>, <slug>/.<name>.<random>)`: link(2) never follows a symlink in its
 *    last component, so the new name refers to exactly the inode that sat in the computer's own
 *    mount at that instant (a hard link can only reach inodes of that same directory tree: the
 *    computer cannot see another computer's run dir);
 * 3. the new name is `lstat`-ed: anything but a socket (a planted symlink, a file) is removed and
 *    refused with `DESKTOP_UNAVAILABLE`;
 * 4. it is renamed over `<slug>/<name>`, the path the host (and the web proxy) connect to: every
 *    component of it is host-owned, so `connect()` has nothing of the computer's to follow.
 *
 * Later calls (`createSocketExposer`) skip steps 1–4 while nothing changed: two `lstat`s, of
 * `computer/<name>` (never followed: a planted symlink is its own inode) and of `<slug>/<name>`,
 * must both show the (dev, inode) of the socket linked last. Our link keeps that inode allocated,
 * so no other file can ever carry that pair: equal means the computer still has exactly the
 * socket that was verified, and the host path still holds it. Anything else — a restarted
 * supervisor's new socket, a symlink or file swapped in, the host link gone — runs steps 1–4
 * again, so a swap is refused on the next call as before.
 *
 * Steps 2–3 are the peer check: the listener behind `<slug>/<name>` is whoever listens on
 * a socket that was inside this computer's own mount — a process of this computer. It can lie
 * about itself, never about another computer.
 */
import { randomBytes } from "node:crypto";
import type { BigIntStats } from "node:fs";
import { chown, link, lstat, mkdir, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { SandboxError } from "../../errors.ts";

/** The sockets the host connects to; nothing else in a run dir is ever resolved by the host. */
const HOST_SOCKETS = ["supervisor.sock", "gateway.sock"] as const;
export type HostSocketName = (typeof HOST_SOCKETS)[number];

/** The run dir's child that is bind-mounted into the computer (its `/run/rakazo`). */
export const COMPUTER_SIDE = "computer";

export interface RunDirOwner {
  readonly uid: number;
  readonly gid: number;
}

/** Why a socket was refused; logged (no paths of other computers, no secrets). */
export type SocketRefusal = "not_a_socket" | "unsafe_directory";

function refused(name: string, reason: SocketRefusal, detail: string): SandboxError {
  return new SandboxError(
    "DESKTOP_UNAVAILABLE",
    `the computer's ${name} was refused (${reason}): ${detail}; the host connects only to sockets inside the computer's own run dir`,
  );
}

/** A real directory (no symlink); `hostOwned`: owned by this process and writable only by it. */
async function checkDirectory(path: string, name: string, hostOwned: boolean): Promise<void> {
  const info = await lstat(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") throw error; // not provisioned (yet): "not listening"
    throw refused(name, "unsafe_directory", `${error.code ?? "lstat failed"}`);
  });
  if (!info.isDirectory()) throw refused(name, "unsafe_directory", "a run dir component is not a directory");
  if (hostOwned && (info.uid !== (process.getuid?.() ?? info.uid) || (info.mode & 0o022) !== 0)) {
    throw refused(name, "unsafe_directory", "a host-owned run dir component is writable by others");
  }
}

/**
 * Creates `<dataDir>/run/<slug>/` (host-owned, 0755) and its `computer/` child owned by the
 * workspace user. A run dir left by an older layout (owned by the workspace user) is taken back.
 */
export async function prepareRunDir(runDir: string, owner: RunDirOwner): Promise<string> {
  await mkdir(join(runDir, ".."), { recursive: true, mode: 0o755 });
  await mkdir(runDir, { recursive: true, mode: 0o755 });
  const info = await lstat(runDir);
  if (!info.isDirectory()) throw new SandboxError("SANDBOX_PROVIDER_ERROR", `${runDir} is not a directory`);
  const uid = process.getuid?.();
  const gid = process.getgid?.();
  if (uid !== undefined && gid !== undefined && (info.uid !== uid || info.gid !== gid)) {
    // Older layout: the computer owned this directory. Nothing runs in it now (provision
    // replaces such containers), so its contents are dropped and it becomes ours.
    await rm(runDir, { recursive: true, force: true });
    await mkdir(runDir, { recursive: true, mode: 0o755 });
  }
  const computerDir = join(runDir, COMPUTER_SIDE);
  await mkdir(computerDir, { recursive: true, mode: 0o755 });
  const side = await lstat(computerDir);
  if (!side.isDirectory())
    throw new SandboxError("SANDBOX_PROVIDER_ERROR", `${computerDir} is not a directory`);
  await chown(computerDir, owner.uid, owner.gid);
  return computerDir;
}

/** The (dev, inode) a verified link holds. */
interface Linked {
  readonly dev: bigint;
  readonly ino: bigint;
}

/**
 * The host path to connect to for the computer's socket `name`: a fresh hard link, in the
 * host-owned run dir, to the socket the computer has now (see the header). Errors: the errno
 * `ENOENT` when the computer has no such socket (its supervisor is not listening yet), or
 * `DESKTOP_UNAVAILABLE` when what it has is refused; `onRefused` is told why (for a log line).
 */
export async function exposeSocket(
  runDir: string,
  name: HostSocketName,
  onRefused: (reason: SocketRefusal) => void = () => {},
): Promise<string> {
  return (await linkSocket(runDir, name, onRefused)).path;
}

async function linkSocket(
  runDir: string,
  name: HostSocketName,
  onRefused: (reason: SocketRefusal) => void,
): Promise<Linked & { readonly path: string }> {
  try {
    await checkDirectory(join(runDir, ".."), name, true);
    await checkDirectory(runDir, name, true);
    await checkDirectory(join(runDir, COMPUTER_SIDE), name, false);
  } catch (error) {
    if (error instanceof SandboxError) onRefused("unsafe_directory");
    throw error;
  }
  const exposed = join(runDir, name);
  const staging = join(runDir, `.${name}.${randomBytes(6).toString("hex")}`);
  // ENOENT (nothing there) propagates as is: the caller may start the supervisor and retry.
  await link(join(runDir, COMPUTER_SIDE, name), staging);
  try {
    const info = await lstat(staging, { bigint: true });
    if (!info.isSocket()) {
      onRefused("not_a_socket");
      throw refused(name, "not_a_socket", info.isSymbolicLink() ? "it is a symlink" : "it is not a socket");
    }
    await rename(staging, exposed);
    return { path: exposed, dev: info.dev, ino: info.ino };
  } finally {
    await rm(staging, { force: true });
  }
}

interface SocketExposer {
  /** `exposeSocket`, linking again only when the computer's socket or the host link changed. */
  expose(runDir: string, name: HostSocketName, onRefused?: (reason: SocketRefusal) => void): Promise<string>;
  /** Drops what is known of a run dir (its computer was destroyed). */
  forget(runDir: string): void;
}

interface SocketExposerOptions {
  /** Told after every `link()` (steps 1–4 ran); tests count them. */
  readonly onLinked?: (runDir: string, name: HostSocketName) => void;
}

const MAX_KNOWN = 10_000;

function holds(info: BigIntStats | undefined, linked: Linked): boolean {
  return info !== undefined && info.ino === linked.ino && info.dev === linked.dev;
}

/**
 * One provider's memory of the sockets it linked (header: "Later calls"). Concurrent calls that
 * find a socket changed share one re-link.
 */
export function createSocketExposer(options: SocketExposerOptions = {}): SocketExposer {
  const linked = new Map<string, Linked>();
  const relinking = new Map<string, Promise<string>>();
  const missing = () => undefined;
  return {
    async expose(runDir, name, onRefused = () => {}) {
      const exposed = join(runDir, name);
      const known = linked.get(exposed);
      if (known) {
        const [side, host] = await Promise.all([
          lstat(join(runDir, COMPUTER_SIDE, name), { bigint: true }).catch(missing),
          lstat(exposed, { bigint: true }).catch(missing),
        ]);
        if (holds(side, known) && holds(host, known)) return exposed;
        linked.delete(exposed);
      }
      const pending = relinking.get(exposed);
      if (pending) return pending;
      const relink = (async () => {
        try {
          const fresh = await linkSocket(runDir, name, onRefused);
          options.onLinked?.(runDir, name);
          if (linked.size >= MAX_KNOWN) linked.clear();
          linked.set(exposed, { dev: fresh.dev, ino: fresh.ino });
          return fresh.path;
        } finally {
          relinking.delete(exposed);
        }
      })();
      relinking.set(exposed, relink);
      return relink;
    },
    forget(runDir) {
      for (const name of HOST_SOCKETS) linked.delete(join(runDir, name));
    },
  };
}
