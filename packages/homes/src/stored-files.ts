/**
 * FIL-1: browsing and text preview of a stored workspace on the host. The home may come from a
 * Docker container (untrusted content, possibly running), so nothing here follows a symlink:
 * every component is opened beneath its parent's descriptor with O_NOFOLLOW (openBeneath).
 */
import { type FileHandle, lstat, readdir } from "node:fs/promises";
import {
  DIRECTORY_NO_FOLLOW,
  FILE_NO_FOLLOW,
  type FileEntry,
  fdPath,
  isSandboxError,
  normalizeWorkspacePath,
  openBeneath,
} from "@rakazo/sandbox";
import { HomeStoreError } from "./errors.ts";

function relPath(path: string): string {
  try {
    return normalizeWorkspacePath(path);
  } catch (error) {
    if (isSandboxError(error)) throw new HomeStoreError("INVALID_PATH", error.message);
    throw error;
  }
}

/** Opens `rel` beneath `root` without following a symlink at any component (no check-then-open race). */
async function openNoFollow(root: string, rel: string, flags: number, what: string): Promise<FileHandle> {
  try {
    return await openBeneath(root, rel, flags);
  } catch {
    throw new HomeStoreError("FILE_NOT_FOUND", `${rel || "/"} ${what}`);
  }
}

export async function listHomeFiles(root: string, path: string): Promise<FileEntry[]> {
  const rel = relPath(path);
  const dir = await openNoFollow(root, rel, DIRECTORY_NO_FOLLOW, "is not a directory");
  try {
    const names = (await readdir(fdPath(dir))).sort();
    const entries: FileEntry[] = [];
    for (const name of names) {
      const entry = await lstat(fdPath(dir, name)).catch(() => undefined);
      if (!entry) continue;
      entries.push({
        path: rel === "" ? name : `${rel}/${name}`,
        name,
        type: entry.isDirectory()
          ? "directory"
          : entry.isFile()
            ? "file"
            : entry.isSymbolicLink()
              ? "symlink"
              : "other",
        size: entry.isFile() ? entry.size : 0,
        modifiedAt: entry.mtime,
      });
    }
    return entries;
  } finally {
    await dir.close();
  }
}

export async function readHomeFile(root: string, path: string, maxBytes: number): Promise<Buffer> {
  const rel = relPath(path);
  if (rel === "") throw new HomeStoreError("FILE_NOT_FOUND", "the workspace root is a directory");
  const handle = await openNoFollow(root, rel, FILE_NO_FOLLOW, "does not exist");
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new HomeStoreError("FILE_NOT_FOUND", `${rel} is not a file`);
    if (info.size > maxBytes) {
      throw new HomeStoreError("FILE_TOO_LARGE", `${rel} is larger than ${maxBytes} bytes`);
    }
    const buffer = Buffer.alloc(info.size);
    const { bytesRead } = await handle.read(buffer, 0, info.size, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}
