/**
 * The on-disk half shared by both stores: `DATA_DIR/homes/<home key>` (the local home) and
 * `DATA_DIR/home-revisions/<home key>.json` (its metadata), the per-home lock, and the one safe
 * extraction path (packages/sandbox archive.ts: entry validation, staging + swap) with this
 * package's limits and error codes.
 */
import { randomBytes } from "node:crypto";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Readable } from "node:stream";
import {
  type ExtractOptions,
  extractArchive,
  type FileOwner,
  isSandboxError,
  recoverInterruptedSwap,
} from "@rakazo/sandbox";
import { type ChainState, fileIndexPath } from "./chain.ts";
import { diskFullAsHomeError, HomeStoreError, isHomeStoreError } from "./errors.ts";
import { isTransientBrowserFile } from "./exclude.ts";
import { fileHomeLock, type HomeLock, KeyedMutex, type ReleaseLock } from "./lock.ts";
import type { HomeLimits } from "./store.ts";

export interface HomeMetadata {
  readonly homeKey: string;
  /** The revision the local home corresponds to (0 = never checkpointed). */
  readonly revision: number;
  /**
   * `pending`: the local home was replaced by a checkpoint that has not committed yet, so it
   * may not match `revision` (the object store then refreshes it from the bucket).
   */
  readonly state: "clean" | "pending";
  /** Fingerprint of the local home at the last checkpoint (./manifest.ts). */
  readonly manifest: string | null;
  /** SHA-256 of the last exported archive (archive sources). */
  readonly archiveDigest: string | null;
  readonly savedAt: string;
  /** Object store: the chain the latest revision belongs to (./chain.ts); absent = next is a base. */
  readonly chain?: ChainState;
}

/** A home key becomes one path segment and one object-key segment; anything else is refused. */
export function checkHomeKey(homeKey: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/.test(homeKey) || homeKey.includes("..")) {
    throw new HomeStoreError("INVALID_HOME_KEY", `invalid home key: ${JSON.stringify(homeKey)}`);
  }
  return homeKey;
}

export interface HomeFoldersOptions {
  readonly dataDir: string;
  /** Cross-process lock; defaults to lock files under `DATA_DIR/home-revisions`. */
  readonly lock?: HomeLock;
  readonly limits: HomeLimits;
  /** Owner of restored homes (./store.ts HomeStoreOptions.owner). */
  readonly owner?: FileOwner | undefined;
}

export class HomeFolders {
  readonly homesDir: string;
  readonly revisionsDir: string;
  readonly limits: HomeLimits;
  readonly owner: FileOwner | undefined;
  readonly #mutex = new KeyedMutex();
  readonly #lock: HomeLock;

  constructor(options: HomeFoldersOptions) {
    this.homesDir = join(options.dataDir, "homes");
    this.revisionsDir = join(options.dataDir, "home-revisions");
    this.limits = options.limits;
    this.owner = options.owner;
    this.#lock = options.lock ?? fileHomeLock(this.revisionsDir);
  }

  homeDir(homeKey: string): string {
    return join(this.homesDir, checkHomeKey(homeKey));
  }

  /** Locks the home (in-process, then across processes) and repairs an interrupted swap. */
  async acquire(homeKey: string): Promise<ReleaseLock> {
    checkHomeKey(homeKey);
    await mkdir(this.homesDir, { recursive: true, mode: 0o755 });
    await mkdir(this.revisionsDir, { recursive: true, mode: 0o700 });
    const releaseLocal = await this.#mutex.acquire(homeKey);
    let releaseShared: ReleaseLock;
    try {
      releaseShared = await this.#lock.acquire(homeKey);
    } catch (error) {
      await releaseLocal();
      throw error;
    }
    const release = async () => {
      try {
        await releaseShared();
      } finally {
        await releaseLocal();
      }
    };
    try {
      await recoverInterruptedSwap(this.homeDir(homeKey));
    } catch (error) {
      await release();
      throw error;
    }
    return release;
  }

  /** Runs `fn` under the home's lock; a full disk surfaces as `STORAGE_FULL` (./errors.ts). */
  async withLock<T>(homeKey: string, fn: () => Promise<T>): Promise<T> {
    try {
      const release = await this.acquire(homeKey);
      try {
        return await fn();
      } finally {
        await release();
      }
    } catch (error) {
      throw diskFullAsHomeError(error, `home ${homeKey}`);
    }
  }

  async readMetadata(homeKey: string): Promise<HomeMetadata | undefined> {
    try {
      return JSON.parse(await readFile(this.#metadataFile(homeKey), "utf8")) as HomeMetadata;
    } catch {
      return undefined;
    }
  }

  /** Written to a temp file and renamed, so a crash leaves the old or the new metadata. */
  async writeMetadata(meta: HomeMetadata): Promise<void> {
    const file = this.#metadataFile(meta.homeKey);
    const tmp = `${file}.${randomBytes(4).toString("hex")}.tmp`;
    await writeFile(tmp, `${JSON.stringify(meta)}\n`, { mode: 0o600 });
    await rename(tmp, file);
  }

  async removeHome(homeKey: string): Promise<void> {
    await rm(this.homeDir(homeKey), { recursive: true, force: true });
    await rm(this.#metadataFile(homeKey), { force: true });
    await rm(this.fileIndexPath(homeKey), { force: true });
  }

  /**
   * Validates `archive` (PER-6) into staging and swaps it in as the local home. The previous
   * home is untouched unless every entry and — for sealed sources — the final segment verified.
   * Transient browser files are dropped.
   */
  async extractInto(homeKey: string, archive: Readable): Promise<void> {
    try {
      await extractArchive(
        archive,
        this.homeDir(homeKey),
        // Limits are enforced by the hook, with this package's code.
        { maxEntries: Number.MAX_SAFE_INTEGER, maxTotalBytes: Number.MAX_SAFE_INTEGER },
        this.extractOptions(),
      );
    } catch (error) {
      throw toHomeError(error);
    }
  }

  /**
   * What every extraction of a stored workspace uses: transient browser files dropped, the
   * restored owner, and this store's entry and byte limits, counted per archive (each object of
   * a chain obeys them on its own).
   */
  extractOptions(): ExtractOptions {
    let entries = 0;
    let bytes = 0;
    const { maxEntries, maxTotalBytes } = this.limits;
    return {
      exclude: isTransientBrowserFile,
      ...(this.owner ? { owner: this.owner } : {}),
      onEntry: (entry) => {
        entries += 1;
        bytes += entry.size;
        if (entries > maxEntries) {
          throw new HomeStoreError(
            "CHECKPOINT_TOO_LARGE",
            `the workspace has more than ${maxEntries} entries`,
          );
        }
        if (bytes > maxTotalBytes) {
          throw new HomeStoreError(
            "CHECKPOINT_TOO_LARGE",
            `the workspace is larger than ${maxTotalBytes} bytes`,
          );
        }
      },
    };
  }

  fileIndexPath(homeKey: string): string {
    return fileIndexPath(this.revisionsDir, checkHomeKey(homeKey));
  }

  #metadataFile(homeKey: string): string {
    return join(this.revisionsDir, `${checkHomeKey(homeKey)}.json`);
  }
}

/** Keeps our own codes (from a hook or a failing sealed source); archive refusals → INVALID_ARCHIVE. */
export function toHomeError(error: unknown): unknown {
  if (isHomeStoreError(error)) return error;
  if (isSandboxError(error)) {
    let cause: unknown = error.cause;
    while (cause !== undefined) {
      if (isHomeStoreError(cause)) return cause;
      cause = (cause as { cause?: unknown }).cause;
    }
    if (error.code === "INVALID_ARCHIVE") {
      return new HomeStoreError("INVALID_ARCHIVE", error.message, { cause: error });
    }
  }
  return error;
}
