/**
 * FIL-1: browsing and text preview of a stored workspace on the host. The home may come from a
 * Docker container (untrusted content), so nothing here follows a symlink: every component of
 * the path is lstat-ed and the file is opened with O_NOFOLLOW.
 */
import { constants } from "node:fs";
import { lstat, open, readdir } from "node:fs/promises";
import { join } from "node:path";
import { type FileEntry, isSandboxError, normalizeWorkspacePath } from "@rakazo/sandbox";
import { HomeStoreError } from "./errors.ts";

function relPath(path: string): string {
  try {
    return normalizeWorkspacePath(path);
  } catch (error) {
    if (isSandboxError(error)) throw new HomeStoreError("INVALID_PATH", error.message);
    throw error;
  }
}

/** Resolves `rel` under `root` without following links; every parent must be a real directory. */
async function resolveNoFollow(root: string, rel: string): Promise<string> {
  let current = root;
  for (const part of rel === "" ? [] : rel.split("/")) {
    const parent = await lstat(current).catch(() => undefined);
    if (!parent?.isDirectory()) throw new HomeStoreError("FILE_NOT_FOUND", `${rel} does not exist`);
    current = join(current, part);
  }
  return current;
}

export async function listHomeFiles(root: string, path: string): Promise<FileEntry[]> {
  const rel = relPath(path);
  const dir = await resolveNoFollow(root, rel);
  const info = await lstat(dir).catch(() => undefined);
  if (!info?.isDirectory()) throw new HomeStoreError("FILE_NOT_FOUND", `${rel || "/"} is not a directory`);
  const names = (await readdir(dir)).sort();
  const entries: FileEntry[] = [];
  for (const name of names) {
    const entry = await lstat(join(dir, name)).catch(() => undefined);
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
}

export async function readHomeFile(root: string, path: string, maxBytes: number): Promise<Buffer> {
  const rel = relPath(path);
  if (rel === "") throw new HomeStoreError("FILE_NOT_FOUND", "the workspace root is a directory");
  const file = await resolveNoFollow(root, rel);
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    throw new HomeStoreError("FILE_NOT_FOUND", `${rel} does not exist`);
  }
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
