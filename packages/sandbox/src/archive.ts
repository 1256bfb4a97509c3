/**
 * Workspace archives: tar streams of directories and regular files with relative paths.
 * `extractArchive` is the one safe restore path (PER-6): it validates every entry, writes into
 * a fresh staging directory, and only then swaps it into place, so a refused archive leaves the
 * previous contents untouched.
 */
import { createWriteStream } from "node:fs";
import { type FileHandle, lchown, lstat, mkdir, readdir, rename, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import tar from "tar-stream";
import { SandboxError } from "./errors.ts";
import { DIRECTORY_NO_FOLLOW, FILE_NO_FOLLOW, fdPath, openBeneath, openChild } from "./no-follow.ts";

export interface ArchiveLimits {
  readonly maxEntries: number;
  readonly maxTotalBytes: number;
}

export const DEFAULT_ARCHIVE_LIMITS: ArchiveLimits = {
  maxEntries: 50_000,
  maxTotalBytes: 8 * 1024 ** 3,
};

/** Decides which workspace paths stay out of an archive (e.g. transient browser caches, PER-7). */
export type ArchiveExclude = (relPath: string, type: "file" | "directory") => boolean;

export interface PackOptions {
  /** Excluded directories are skipped with everything below them. */
  readonly exclude?: ArchiveExclude;
}

export interface ExtractOptions {
  /** Excluded entries still count against the limits but are not written. */
  readonly exclude?: ArchiveExclude;
  /**
   * Sees every validated entry before it is written. An error it throws aborts the extraction
   * and reaches the caller unchanged (callers use it for their own limits and error codes).
   */
  readonly onEntry?: (entry: { path: string; type: "file" | "directory"; size: number }) => void;
  /**
   * Owner of everything extracted, the target folder included, set in staging before the swap
   * (e.g. the uid a container runs as when the folder is its bind-mounted home). Needs root.
   */
  readonly owner?: FileOwner;
  /**
   * Writes over what the folder already holds (an incremental checkpoint's delta applied to a
   * restored base, `extractIntoStaging` only): an entry replaces the file or folder at its path.
   * A path may still appear only once per archive.
   */
  readonly overlay?: boolean;
}

export interface FileOwner {
  readonly uid: number;
  readonly gid: number;
}

/** Validates one archive entry name; returns the normalised relative path ("" = the root). */
export function archiveEntryPath(name: string): string {
  if (name.includes("\0")) throw invalid("entry name contains a NUL byte");
  if (name.startsWith("/")) throw invalid(`absolute path: ${JSON.stringify(name)}`);
  const parts: string[] = [];
  for (const part of name.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") throw invalid(`path with '..': ${JSON.stringify(name)}`);
    parts.push(part);
  }
  return parts.join("/");
}

/**
 * Packs `dir` (only directories and regular files). The tree may be a running computer's home:
 * every entry is opened beneath its parent's descriptor with `O_NOFOLLOW` (./no-follow.ts), so
 * a symlink swapped in at any moment is skipped, never followed into another tree.
 */
export function packDirectory(dir: string, options: PackOptions = {}): Readable {
  const pack = tar.pack();
  void (async () => {
    try {
      const root = await openBeneath(dir, "", DIRECTORY_NO_FOLLOW);
      try {
        await packInto(pack, root, "", options.exclude);
      } finally {
        await root.close();
      }
      pack.finalize();
    } catch (error) {
      pack.destroy(error as Error);
    }
  })();
  return pack as unknown as Readable;
}

/** Errors of an entry that was replaced or removed while packing: skipped, like a symlink. */
const SWAPPED = new Set(["ELOOP", "ENOTDIR", "ENOENT", "ENXIO"]);

async function openEntry(dir: FileHandle, name: string, flags: number): Promise<FileHandle | undefined> {
  try {
    return await openChild(dir, name, flags);
  } catch (error) {
    if (SWAPPED.has((error as NodeJS.ErrnoException).code ?? "")) return undefined;
    throw error;
  }
}

async function packInto(
  pack: tar.Pack,
  dir: FileHandle,
  rel: string,
  exclude: ArchiveExclude | undefined,
): Promise<void> {
  const entries = await readdir(fdPath(dir), { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    const relPath = rel === "" ? entry.name : `${rel}/${entry.name}`;
    // Symlinks, sockets, devices and FIFOs are not part of a portable workspace.
    if (!entry.isDirectory() && !entry.isFile()) continue;
    if (exclude?.(relPath, entry.isDirectory() ? "directory" : "file")) continue;
    // The type is checked again on the open descriptor: the name may have changed meanwhile.
    const handle = await openEntry(
      dir,
      entry.name,
      entry.isDirectory() ? DIRECTORY_NO_FOLLOW : FILE_NO_FOLLOW,
    );
    if (!handle) continue;
    try {
      const info = await handle.stat();
      if (info.isDirectory()) {
        if (exclude?.(relPath, "directory")) continue;
        pack.entry({ name: `${relPath}/`, type: "directory", mode: info.mode & 0o7777, mtime: info.mtime });
        await packInto(pack, handle, relPath, exclude);
      } else if (info.isFile()) {
        if (exclude?.(relPath, "file")) continue;
        const sink = pack.entry({
          name: relPath,
          type: "file",
          size: info.size,
          mode: info.mode & 0o7777,
          mtime: info.mtime,
        });
        // Bounded to the size in the header: a file growing meanwhile cannot overrun its entry.
        const content =
          info.size === 0
            ? Readable.from([])
            : handle.createReadStream({ start: 0, end: info.size - 1, autoClose: false });
        await pipeline(content, sink);
      }
    } finally {
      await handle.close();
    }
  }
}

/**
 * Extracts `archive` so that `targetDir` ends up holding exactly its contents. Nothing in
 * `targetDir` changes unless the whole archive is valid.
 */
export async function extractArchive(
  archive: Readable,
  targetDir: string,
  limits: ArchiveLimits = DEFAULT_ARCHIVE_LIMITS,
  options: ExtractOptions = {},
): Promise<void> {
  const staging = stagingPath(targetDir);
  await rm(staging, { recursive: true, force: true });
  await mkdir(staging, { recursive: true, mode: 0o755 });
  try {
    await extractIntoStaging(archive, staging, limits, options);
    await swapStaging(staging, targetDir, options.owner);
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    throw error;
  }
}

/** A fresh staging folder name beside `targetDir` (`recoverInterruptedSwap` removes leftovers). */
export function stagingPath(targetDir: string, suffix = ""): string {
  return `${targetDir}.staging-${process.pid}-${Date.now()}${suffix}`;
}

/** Gives a fully extracted `staging` tree its owner and swaps it in as `targetDir`. */
export async function swapStaging(staging: string, targetDir: string, owner?: FileOwner): Promise<void> {
  if (owner) await chownTree(staging, owner);
  const previous = `${targetDir}.previous-${process.pid}-${Date.now()}`;
  const hadTarget = await exists(targetDir);
  if (hadTarget) await rename(targetDir, previous);
  await rename(staging, targetDir);
  if (hadTarget) await rm(previous, { recursive: true, force: true });
}

/**
 * After a crash between the two renames of the swap, `targetDir` is missing while its
 * `.previous-*` sibling still holds the last good contents: put it back. Stale staging folders
 * (an extraction that never finished) are removed. Safe to call when nothing was interrupted;
 * callers serialize it with their own extractions into `targetDir`.
 */
export async function recoverInterruptedSwap(targetDir: string): Promise<void> {
  const parent = dirname(targetDir);
  const base = targetDir.slice(parent.length + 1);
  let names: string[];
  try {
    names = await readdir(parent);
  } catch {
    return;
  }
  const previous = names.filter((n) => n.startsWith(`${base}.previous-`)).sort();
  const newest = previous.at(-1);
  if (newest && !(await exists(targetDir))) await rename(join(parent, newest), targetDir);
  for (const name of names) {
    if (name.startsWith(`${base}.staging-`) || name.startsWith(`${base}.previous-`)) {
      await rm(join(parent, name), { recursive: true, force: true });
    }
  }
}

/**
 * Validates `archive` entry by entry (PER-6) into `staging`, a folder the caller created and
 * owns (it holds only what earlier extractions wrote: folders and regular files, no links).
 */
export async function extractIntoStaging(
  archive: Readable,
  staging: string,
  limits: ArchiveLimits,
  options: ExtractOptions,
): Promise<void> {
  const extract = tar.extract();
  // A refused entry destroys the extractor; its late "premature close" must not become an
  // uncaught error (that would take the whole process down on a hostile archive).
  extract.on("error", () => {});
  let entries = 0;
  let totalBytes = 0;
  const written = new Set<string>();
  // Errors of the caller's hook pass through unchanged; everything else becomes INVALID_ARCHIVE
  // with the original error as its cause (e.g. a decrypting source that failed to verify).
  const hookErrors = new WeakSet<object>();
  const done = pipeline(archive, extract as unknown as NodeJS.WritableStream).catch((error: unknown) => {
    throw error instanceof SandboxError
      ? error
      : invalid(`unreadable archive: ${(error as Error).message}`, error);
  });
  // Awaited below on every path; this only keeps an early rejection from counting as unhandled.
  done.catch(() => {});
  try {
    for await (const entry of extract) {
      const header = entry.header;
      entries += 1;
      if (entries > limits.maxEntries) throw invalid(`more than ${limits.maxEntries} entries`);
      const rel = archiveEntryPath(header.name);
      if ((header.type === "directory" || header.type === "file") && options.onEntry) {
        try {
          options.onEntry({ path: rel, type: header.type, size: header.size ?? 0 });
        } catch (error) {
          if (error !== null && typeof error === "object") hookErrors.add(error);
          throw error;
        }
      }
      if (header.type === "directory") {
        if (rel !== "" && !options.exclude?.(rel, "directory")) {
          if (options.overlay) await replaceable(join(staging, rel), "directory");
          await mkdir(join(staging, rel), { recursive: true, mode: 0o755 });
        }
        entry.resume();
      } else if (header.type === "file") {
        if (rel === "") throw invalid("a file entry names the root");
        totalBytes += header.size ?? 0;
        if (totalBytes > limits.maxTotalBytes) throw invalid(`more than ${limits.maxTotalBytes} bytes`);
        if (options.exclude?.(rel, "file")) {
          entry.resume();
          continue;
        }
        const target = join(staging, rel);
        await mkdir(dirname(target), { recursive: true, mode: 0o755 });
        if (options.overlay) {
          if (written.has(rel)) throw invalid(`entry ${JSON.stringify(rel)} appears twice`);
          written.add(rel);
          await replaceable(target, "file");
        }
        // `wx`: a later entry may not overwrite (or write through) an earlier one.
        await pipeline(
          entry,
          createWriteStream(target, { flags: "wx", mode: (header.mode ?? 0o644) & 0o777 }),
        );
      } else {
        throw invalid(`entry ${JSON.stringify(header.name)} is a ${header.type}, not a file or directory`);
      }
    }
    await done;
  } catch (error) {
    archive.destroy();
    await done.catch(() => {});
    if (error instanceof SandboxError) throw error;
    if (error !== null && typeof error === "object" && hookErrors.has(error)) throw error;
    throw invalid(`unreadable archive: ${(error as Error).message}`, error);
  }
}

/** Overlay: clears `path` for an entry of `type` (a file is replaced; a folder stays a folder). */
async function replaceable(path: string, type: "file" | "directory"): Promise<void> {
  const info = await lstat(path).catch(() => undefined);
  if (!info || (type === "directory" && info.isDirectory())) return;
  await rm(path, { recursive: true, force: true });
}

/** lchown of a freshly extracted tree (directories and regular files only; links never followed). */
async function chownTree(root: string, owner: FileOwner): Promise<void> {
  await lchown(root, owner.uid, owner.gid);
  for (const entry of await readdir(root, { withFileTypes: true })) {
    const path = join(root, entry.name);
    if (entry.isDirectory()) await chownTree(path, owner);
    else await lchown(path, owner.uid, owner.gid);
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch {
    return false;
  }
}

function invalid(message: string, cause?: unknown): SandboxError {
  return new SandboxError("INVALID_ARCHIVE", message, cause === undefined ? undefined : { cause });
}
