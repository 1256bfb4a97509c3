/**
 * Incremental checkpoints (docs/persistence.md "Incremental checkpoints"): a revision is either a
 * base (a sealed tar of the whole workspace, the format of ./seal.ts version 1) or a delta (a
 * sealed version 2 object) on top of the revision before it. A delta's plaintext is
 *
 *   "RKZD" ‖ index length u32 ‖ index (JSON) ‖ tar of the entries that changed
 *
 * and its index names the chain it extends (base first, parent last), the parent object's header
 * digest (so a different object of the parent's revision does not fit) and the paths deleted
 * since the parent. Changes are judged by the home's walk (./manifest.ts): a file whose size,
 * mode, mtime, ctime or inode differs is carried whole. A new base is written after
 * `maxDeltas` deltas, or once the deltas together carry more than `maxDeltaRatio` of the base.
 */
import { open, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type ArchiveExclude, archiveEntryPath, isSandboxError } from "@rakazo/sandbox";
import { HomeStoreError } from "./errors.ts";
import { isTransientBrowserFile } from "./exclude.ts";
import type { ManifestEntry } from "./manifest.ts";

export interface ChainPolicy {
  /** Deltas on one base before the next checkpoint writes a new base (0 = always a base). */
  readonly maxDeltas: number;
  /** A new base once the deltas together carry more than this fraction of the base's bytes. */
  readonly maxDeltaRatio: number;
}

export const DEFAULT_CHAIN_POLICY: ChainPolicy = { maxDeltas: 20, maxDeltaRatio: 0.25 };

/** Where the latest revision stands in its chain; kept in the cache metadata. */
export interface ChainState {
  /** Base first, the latest revision last. */
  readonly revisions: readonly number[];
  /** Header digest of the latest revision's object (./seal.ts `headerDigest`). */
  readonly tipHeader: string;
  readonly baseBytes: number;
  /** Bytes of file content all deltas of the chain carried. */
  readonly deltaBytes: number;
}

/** The index at the start of a delta's plaintext. */
export interface DeltaIndex {
  readonly format: 1;
  /** The revisions this delta applies on top of: base first, parent last. */
  readonly chain: readonly number[];
  readonly parentHeader: string;
  /** Paths present in the parent and gone (or of another type) now; top-most only. */
  readonly deleted: readonly string[];
  readonly baseBytes: number;
  readonly deltaBytes: number;
}

const DELTA_MAGIC = Buffer.from("RKZD", "ascii");
const MAX_INDEX_BYTES = 64 * 1024 * 1024;
/** Far above any policy's maxDeltas; a longer chain in an index is refused before any download. */
const MAX_CHAIN = 1000;

export function encodeDeltaPrefix(index: DeltaIndex): Buffer {
  const json = Buffer.from(JSON.stringify(index), "utf8");
  const length = Buffer.alloc(4);
  length.writeUInt32BE(json.length, 0);
  return Buffer.concat([DELTA_MAGIC, length, json]);
}

function invalidDelta(message: string): HomeStoreError {
  return new HomeStoreError("INVALID_ARCHIVE", `invalid delta: ${message}`);
}

const isCount = (n: unknown): n is number => Number.isSafeInteger(n) && (n as number) >= 0;

/** A delta index as read from (verified, but possibly hostile) plaintext: checked field by field. */
function parseDeltaIndex(json: string, revision: number): DeltaIndex {
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(json) as Record<string, unknown>;
  } catch {
    throw invalidDelta("the index is not JSON");
  }
  const { format, chain, parentHeader, deleted, baseBytes, deltaBytes } = raw ?? {};
  if (format !== 1) throw invalidDelta("unknown index format");
  if (!Array.isArray(chain) || chain.length === 0 || chain.length > MAX_CHAIN)
    throw invalidDelta("bad chain");
  if (!chain.every((r) => isCount(r) && r > 0)) throw invalidDelta("bad chain");
  for (let i = 1; i < chain.length; i += 1)
    if (chain[i] !== chain[i - 1] + 1) throw invalidDelta("the chain has gaps");
  if (chain.at(-1) !== revision - 1) throw invalidDelta(`revision ${revision} does not follow its parent`);
  if (typeof parentHeader !== "string" || !/^[0-9a-f]{64}$/.test(parentHeader))
    throw invalidDelta("bad parent header digest");
  if (!Array.isArray(deleted)) throw invalidDelta("bad deleted list");
  const paths = deleted.map((path) => {
    if (typeof path !== "string") throw invalidDelta("bad deleted path");
    let rel: string;
    try {
      rel = archiveEntryPath(path);
    } catch (error) {
      throw isSandboxError(error) ? invalidDelta(error.message) : error;
    }
    if (rel === "") throw invalidDelta("a deletion names the root");
    return rel;
  });
  if (!isCount(baseBytes) || !isCount(deltaBytes)) throw invalidDelta("bad byte counts");
  return { format, chain, parentHeader, deleted: paths, baseBytes, deltaBytes };
}

/** Reads the index of a delta's plaintext file; the tar follows at `tarOffset`. */
export async function readDeltaFile(
  path: string,
  revision: number,
): Promise<{ index: DeltaIndex; tarOffset: number }> {
  const handle = await open(path, "r");
  try {
    const head = Buffer.alloc(8);
    const { bytesRead } = await handle.read(head, 0, 8, 0);
    if (bytesRead < 8 || !head.subarray(0, 4).equals(DELTA_MAGIC)) throw invalidDelta("no index");
    const length = head.readUInt32BE(4);
    if (length > MAX_INDEX_BYTES) throw invalidDelta("the index is too large");
    const json = Buffer.alloc(length);
    const read = await handle.read(json, 0, length, 8);
    if (read.bytesRead < length) throw invalidDelta("truncated index");
    return { index: parseDeltaIndex(json.toString("utf8"), revision), tarOffset: 8 + length };
  } finally {
    await handle.close();
  }
}

/** What changed between the last checkpoint's walk and this one. */
interface HomeChanges {
  /** Regular files to carry whole. */
  readonly files: ReadonlySet<string>;
  /** Folders the delta's tar holds: new ones and the parents of every carried entry. */
  readonly dirs: ReadonlySet<string>;
  readonly deleted: readonly string[];
  readonly bytes: number;
}

export function diffEntries(
  previous: ReadonlyMap<string, ManifestEntry>,
  current: ReadonlyMap<string, ManifestEntry>,
): HomeChanges {
  const files = new Set<string>();
  const dirs = new Set<string>();
  let bytes = 0;
  const addParents = (path: string) => {
    for (let at = path.lastIndexOf("/"); at > 0; at = path.lastIndexOf("/", at - 1)) {
      const dir = path.slice(0, at);
      if (dirs.has(dir)) break;
      dirs.add(dir);
    }
  };
  for (const [path, entry] of current) {
    const before = previous.get(path);
    if (before && before.type === entry.type && before.size === entry.size && before.stat === entry.stat)
      continue;
    if (entry.type === "f") {
      files.add(path);
      bytes += entry.size;
    } else if (before?.type !== "d") {
      dirs.add(path);
    } else continue; // a folder's mode: the format does not carry folder modes
    addParents(path);
  }
  const deleted: string[] = [];
  for (const [path, entry] of previous) {
    const now = current.get(path);
    if (now && now.type === entry.type) continue;
    const top = deleted.at(-1);
    if (top !== undefined && path.startsWith(`${top}/`)) continue; // walk order: parents first
    deleted.push(path);
  }
  return { files, dirs, deleted, bytes };
}

/** The pack filter that leaves exactly the changed entries (and their parents) in a delta. */
export function deltaExclude(changes: HomeChanges): ArchiveExclude {
  return (path, type) =>
    isTransientBrowserFile(path, type) ||
    (type === "file" ? !changes.files.has(path) : !changes.dirs.has(path));
}

/** Where the last walk of a home is kept: `DATA_DIR/home-revisions/<home key>.files.json`. */
export function fileIndexPath(revisionsDir: string, homeKey: string): string {
  return join(revisionsDir, `${homeKey}.files.json`);
}

type IndexRow = [path: string, type: "f" | "d", size: number, stat: string];

export async function writeFileIndex(
  file: string,
  revision: number,
  entries: ReadonlyMap<string, ManifestEntry>,
): Promise<void> {
  const rows: IndexRow[] = [...entries].map(([path, e]) => [path, e.type, e.size, e.stat]);
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, JSON.stringify({ revision, rows }), { mode: 0o600 });
  await rename(tmp, file);
}

/** The walk stored for `revision`, or undefined (missing, another revision, unreadable). */
export async function readFileIndex(
  file: string,
  revision: number,
): Promise<Map<string, ManifestEntry> | undefined> {
  try {
    const parsed = JSON.parse(await readFile(file, "utf8")) as { revision: number; rows: IndexRow[] };
    if (parsed.revision !== revision) return undefined;
    return new Map(parsed.rows.map(([path, type, size, stat]) => [path, { type, size, stat }]));
  } catch {
    return undefined;
  }
}

export async function removeFileIndex(file: string): Promise<void> {
  await rm(file, { force: true });
}
