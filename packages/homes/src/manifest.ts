/**
 * A cheap fingerprint of a home directory: paths, types, sizes, modes and mtimes (no content
 * reads), hashed. Equal fingerprints mean "nothing changed since the last checkpoint", so the
 * checkpoint is skipped. It costs one lstat per entry.
 */
import { createHash } from "node:crypto";
import { lstat, readdir } from "node:fs/promises";
import { join } from "node:path";
import type { ArchiveExclude } from "@rakazo/sandbox";

export interface HomeManifest {
  readonly digest: string;
  readonly files: number;
  readonly bytes: number;
}

export async function computeManifest(dir: string, exclude?: ArchiveExclude): Promise<HomeManifest> {
  const hash = createHash("sha256");
  let files = 0;
  let bytes = 0;
  const walk = async (rel: string): Promise<void> => {
    let names: string[];
    try {
      names = await readdir(rel === "" ? dir : join(dir, rel));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT" && rel === "") return;
      throw error;
    }
    names.sort();
    const infos = await Promise.all(
      names.map(async (name) => {
        const path = rel === "" ? name : `${rel}/${name}`;
        return { path, info: await lstat(join(dir, path), { bigint: true }).catch(() => undefined) };
      }),
    );
    for (const { path, info } of infos) {
      if (!info) continue;
      if (info.isDirectory()) {
        if (exclude?.(path, "directory")) continue;
        hash.update(`d ${path} ${info.mode}\n`);
        await walk(path);
      } else if (info.isFile()) {
        if (exclude?.(path, "file")) continue;
        files += 1;
        bytes += Number(info.size);
        hash.update(`f ${path} ${info.size} ${info.mode} ${info.mtimeNs} ${info.ino}\n`);
      }
    }
  };
  await walk("");
  return { digest: hash.digest("hex"), files, bytes };
}
