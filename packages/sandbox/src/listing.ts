/** Workspace listings as the providers' in-computer `find` prints them. */
import type { FileEntry } from "./provider.ts";

/** Parses the NUL-separated `find -printf '%y\t%s\t%T@\t%P\0'` listing (pure; unit-tested). */
export function parseListing(output: Buffer, dir: string): FileEntry[] {
  const entries: FileEntry[] = [];
  for (const record of output.toString("utf8").split("\0")) {
    if (record === "") continue;
    const [kind, size, mtime, ...rest] = record.split("\t");
    const name = rest.join("\t");
    if (!kind || name === "") continue;
    entries.push({
      path: dir === "" ? name : `${dir}/${name}`,
      name,
      type: kind === "f" ? "file" : kind === "d" ? "directory" : kind === "l" ? "symlink" : "other",
      size: Number(size ?? 0),
      modifiedAt: new Date(Math.round(Number(mtime ?? 0) * 1000)),
    });
  }
  return entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
