/**
 * A cheap fingerprint of a home directory: paths, types, sizes, modes, mtimes, ctimes and inodes
 * (no content reads), hashed; ctime catches a rewrite whose mtime was set back. Equal
 * fingerprints mean "nothing changed since the last checkpoint", so the
 * checkpoint is skipped. It costs one lstat per entry. The same walk lists every entry with its
 * stat (`entries`): what an incremental checkpoint compares with the last one (./chain.ts).
 */
import { createHash } from "node:crypto";
import { type FileHandle, lstat, readdir } from "node:fs/promises";
import { type ArchiveExclude, DIRECTORY_NO_FOLLOW, fdPath, openBeneath, openChild } from "@rakazo/sandbox";

export interface HomeManifest {
  readonly digest: string;
  readonly files: number;
  readonly bytes: number;
  /** Every directory and regular file, path → stat (walk order: parents before children). */
  readonly entries: Map<string, ManifestEntry>;
}

/** What a change is judged by: type, size, mode, mtime, ctime and inode (ctime cannot be set back). */
export interface ManifestEntry {
  readonly type: "f" | "d";
  readonly size: number;
  readonly stat: string;
}

export async function computeManifest(dir: string, exclude?: ArchiveExclude): Promise<HomeManifest> {
  const hash = createHash("sha256");
  let files = 0;
  let bytes = 0;
  const entries = new Map<string, ManifestEntry>();
  // Each directory is walked through its open descriptor (never by path), so a directory the
  // computer swaps for a symlink meanwhile is not followed into another tree.
  const walk = async (handle: FileHandle, rel: string): Promise<void> => {
    const names = (await readdir(fdPath(handle))).sort();
    const infos = await Promise.all(
      names.map(async (name) => ({
        name,
        path: rel === "" ? name : `${rel}/${name}`,
        info: await lstat(fdPath(handle, name), { bigint: true }).catch(() => undefined),
      })),
    );
    for (const { name, path, info } of infos) {
      if (!info) continue;
      if (info.isDirectory()) {
        if (exclude?.(path, "directory")) continue;
        const child = await openChild(handle, name, DIRECTORY_NO_FOLLOW).catch(() => undefined);
        if (!child) continue; // replaced or removed meanwhile
        try {
          hash.update(`d ${path} ${info.mode}\n`);
          entries.set(path, { type: "d", size: 0, stat: `${info.mode}` });
          await walk(child, path);
        } finally {
          await child.close();
        }
      } else if (info.isFile()) {
        if (exclude?.(path, "file")) continue;
        files += 1;
        bytes += Number(info.size);
        hash.update(`f ${path} ${info.size} ${info.mode} ${info.mtimeNs} ${info.ctimeNs} ${info.ino}\n`);
        entries.set(path, {
          type: "f",
          size: Number(info.size),
          stat: `${info.mode} ${info.mtimeNs} ${info.ctimeNs} ${info.ino}`,
        });
      }
    }
  };
  let root: FileHandle;
  try {
    root = await openBeneath(dir, "", DIRECTORY_NO_FOLLOW);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT")
      return { digest: hash.digest("hex"), files, bytes, entries };
    throw error;
  }
  try {
    await walk(root, "");
  } finally {
    await root.close();
  }
  return { digest: hash.digest("hex"), files, bytes, entries };
}
