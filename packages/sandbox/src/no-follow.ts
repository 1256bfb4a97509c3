/**
 * Reading a tree a computer can write (its home, its run dir) from the host without following
 * anything it planted, and without the lstat-then-open race (docs/security.md).
 *
 * Every component is opened relative to its parent's open descriptor, through
 * `/proc/self/fd/<parent fd>/<name>` with `O_NOFOLLOW` — `openat(2)` semantics, which Node does
 * not expose. `/proc/self/fd/<fd>` is the kernel's link to the directory already open (trusted),
 * and `O_NOFOLLOW` refuses a symlink in the one component the computer controls. A component
 * swapped for a symlink after any check therefore fails to open (`ELOOP`/`ENOTDIR`) instead of
 * leading elsewhere. Linux only (the host Rakazo supports).
 */
import { constants } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { SandboxError } from "./errors.ts";

/** Flags for a directory opened without following a symlink in its last component. */
export const DIRECTORY_NO_FOLLOW = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
/** Flags for reading a file (`O_NONBLOCK`: a FIFO swapped in never blocks the host). */
export const FILE_NO_FOLLOW = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** The path of an open descriptor, or of `name` directly inside that open directory. */
export function fdPath(dir: FileHandle, name?: string): string {
  if (name === undefined) return `/proc/self/fd/${dir.fd}`;
  if (name === "" || name === "." || name === ".." || name.includes("/") || name.includes("\0")) {
    throw new SandboxError("INVALID_PATH", `not a single path component: ${JSON.stringify(name)}`);
  }
  return `/proc/self/fd/${dir.fd}/${name}`;
}

/** Opens `name` inside the open directory `dir`; a symlink there fails (`O_NOFOLLOW`). */
export function openChild(dir: FileHandle, name: string, flags: number): Promise<FileHandle> {
  return open(fdPath(dir, name), flags | constants.O_NOFOLLOW);
}

/**
 * Opens `rel` (normalised, "/"-separated, "" = `root` itself) beneath `root`: `root` is the
 * host's own path (not followed if it is a symlink), each directory below is opened with
 * `DIRECTORY_NO_FOLLOW`, the last component with `flags | O_NOFOLLOW`. Errors are the errno
 * of the component that failed (`ELOOP`/`ENOTDIR` for a symlink, `ENOENT`).
 */
export async function openBeneath(root: string, rel: string, flags: number): Promise<FileHandle> {
  const parts = rel === "" ? [] : rel.split("/");
  let current = await open(root, parts.length === 0 ? flags | constants.O_NOFOLLOW : DIRECTORY_NO_FOLLOW);
  try {
    for (let i = 0; i < parts.length; i += 1) {
      const last = i === parts.length - 1;
      const next = await openChild(current, parts[i] as string, last ? flags : DIRECTORY_NO_FOLLOW);
      await current.close();
      current = next;
    }
    return current;
  } catch (error) {
    await current.close().catch(() => {});
    throw error;
  }
}
