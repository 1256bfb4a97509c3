/**
 * Workspace files of a host computer, read and written by this (host) process under
 * `DATA_DIR/homes/<home key>`. Agent commands write that tree, so nothing in it is followed:
 * every component is opened beneath its parent's descriptor with `O_NOFOLLOW` (../../no-follow.ts).
 * A symlink anywhere on a path is refused with `INVALID_PATH` — stricter than Docker, which
 * follows links that stay inside the workspace, because here a followed link would be followed
 * by the host process itself.
 */
import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { type FileHandle, lstat, mkdir, open, readdir, rename, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type { Readable } from "node:stream";
import { extractArchive, packDirectory } from "../../archive.ts";
import { SandboxError } from "../../errors.ts";
import { DIRECTORY_NO_FOLLOW, FILE_NO_FOLLOW, fdPath, openBeneath, openChild } from "../../no-follow.ts";
import { normalizeWorkspacePath } from "../../paths.ts";
import type { FileEntry, SandboxFiles } from "../../provider.ts";

/**
 * Whether a component of `rel` under `home` is a symlink (`O_DIRECTORY|O_NOFOLLOW` on a link
 * fails with ENOTDIR, like a file would). Only classifies an error already raised: nothing is
 * opened or followed.
 */
async function throughSymlink(home: string, rel: string): Promise<boolean> {
  let path = home;
  for (const part of rel.split("/")) {
    path = join(path, part);
    const info = await lstat(path).catch(() => null);
    if (!info) return false;
    if (info.isSymbolicLink()) return true;
  }
  return false;
}

async function mapErrno(error: unknown, home: string, rel: string): Promise<unknown> {
  if (error instanceof SandboxError) return error;
  const code = (error as NodeJS.ErrnoException).code;
  const shown = JSON.stringify(rel);
  if (code === "ENOTDIR" && (await throughSymlink(home, rel))) {
    return new SandboxError("INVALID_PATH", `${shown} goes through a symlink`);
  }
  if (code === "ENOENT") return new SandboxError("FILE_NOT_FOUND", `${shown} does not exist`);
  if (code === "ELOOP") return new SandboxError("INVALID_PATH", `${shown} goes through a symlink`);
  if (code === "ENOTDIR")
    return new SandboxError("NOT_A_DIRECTORY", `${shown} (or a parent) is not a directory`);
  if (code === "EISDIR") return new SandboxError("INVALID_PATH", `${shown} is a directory`);
  return error;
}

function typeOf(info: {
  isFile(): boolean;
  isDirectory(): boolean;
  isSymbolicLink(): boolean;
}): FileEntry["type"] {
  if (info.isFile()) return "file";
  if (info.isDirectory()) return "directory";
  if (info.isSymbolicLink()) return "symlink";
  return "other";
}

/** Opens (creating as needed) each directory of `parts` beneath `root`, never following a link. */
async function openDirCreating(root: string, parts: readonly string[]): Promise<FileHandle> {
  let current = await openBeneath(root, "", DIRECTORY_NO_FOLLOW);
  try {
    for (const part of parts) {
      await mkdir(fdPath(current, part), { mode: 0o755 }).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== "EEXIST") throw error;
      });
      const next = await openChild(current, part, DIRECTORY_NO_FOLLOW);
      await current.close();
      current = next;
    }
    return current;
  } catch (error) {
    await current.close().catch(() => {});
    throw error;
  }
}

/** `homeDir()` is looked up per call: the machine record says which home this machine uses. */
export function createHostFiles(homeDir: () => Promise<string>): SandboxFiles {
  return {
    async list(path) {
      const rel = normalizeWorkspacePath(path);
      const home = await homeDir();
      let dir: FileHandle;
      try {
        dir = await openBeneath(home, rel, DIRECTORY_NO_FOLLOW);
      } catch (error) {
        throw await mapErrno(error, home, rel);
      }
      try {
        const entries: FileEntry[] = [];
        for (const name of await readdir(fdPath(dir))) {
          // lstat of a single component in an open directory: a link is reported, never followed.
          const info = await lstat(fdPath(dir, name)).catch(() => null);
          if (!info) continue;
          entries.push({
            path: rel === "" ? name : `${rel}/${name}`,
            name,
            type: typeOf(info),
            size: info.size,
            modifiedAt: info.mtime,
          });
        }
        return entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      } finally {
        await dir.close();
      }
    },

    async read(path, options) {
      const rel = normalizeWorkspacePath(path);
      if (rel === "") throw new SandboxError("INVALID_PATH", "the workspace root is a directory");
      const max = options?.maxBytes ?? Number.MAX_SAFE_INTEGER;
      const home = await homeDir();
      let handle: FileHandle;
      try {
        handle = await openBeneath(home, rel, FILE_NO_FOLLOW);
      } catch (error) {
        throw await mapErrno(error, home, rel);
      }
      try {
        const info = await handle.stat();
        if (info.isDirectory())
          throw new SandboxError("INVALID_PATH", `${JSON.stringify(rel)} is a directory`);
        if (!info.isFile())
          throw new SandboxError("INVALID_PATH", `${JSON.stringify(rel)} is not a regular file`);
        if (info.size > max) {
          throw new SandboxError("FILE_TOO_LARGE", `${JSON.stringify(rel)} is larger than the allowed size`);
        }
        const data = await handle.readFile();
        if (data.length > max) {
          throw new SandboxError("FILE_TOO_LARGE", `${JSON.stringify(rel)} is larger than the allowed size`);
        }
        return new Uint8Array(data);
      } finally {
        await handle.close();
      }
    },

    async write(path, data) {
      const rel = normalizeWorkspacePath(path);
      if (rel === "") throw new SandboxError("INVALID_PATH", "cannot write the workspace root");
      const parts = rel.split("/");
      const name = parts.pop() as string;
      const home = await homeDir();
      let dir: FileHandle;
      try {
        dir = await openDirCreating(home, parts);
      } catch (error) {
        throw await mapErrno(error, home, rel);
      }
      const tmp = `.rakazo-write.${randomBytes(6).toString("hex")}`;
      try {
        const existing = await lstat(fdPath(dir, name)).catch(() => null);
        if (existing?.isDirectory())
          throw new SandboxError("INVALID_PATH", `${JSON.stringify(rel)} is a directory`);
        const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
        const out = await open(fdPath(dir, tmp), flags, 0o644);
        try {
          await out.writeFile(typeof data === "string" ? Buffer.from(data) : data);
        } finally {
          await out.close();
        }
        // rename(2) replaces the name itself: a symlink planted at `name` is replaced, not followed.
        await rename(fdPath(dir, tmp), fdPath(dir, name));
      } catch (error) {
        await rm(fdPath(dir, tmp), { force: true }).catch(() => {});
        throw await mapErrno(error, home, rel);
      } finally {
        await dir.close();
      }
    },

    async exportWorkspace(): Promise<Readable> {
      // packDirectory opens every entry beneath its parent with O_NOFOLLOW and skips links.
      return packDirectory(await homeDir());
    },

    async importWorkspace(tar) {
      const home = await homeDir();
      // Beside the homes, under a name no home key can take (keys start with a letter or digit).
      const staging = join(dirname(home), `.import-${basename(home)}-${randomBytes(6).toString("hex")}`);
      await mkdir(staging, { mode: 0o700 });
      try {
        const incoming = join(staging, "workspace");
        await extractArchive(tar, incoming);
        const previous = join(staging, "previous");
        await mkdir(previous);
        // The home keeps its inode (a running supervisor has it as its workspace): swap children.
        for (const name of await readdir(home)) await rename(join(home, name), join(previous, name));
        for (const name of await readdir(incoming)) await rename(join(incoming, name), join(home, name));
      } finally {
        await rm(staging, { recursive: true, force: true });
      }
    },
  };
}
