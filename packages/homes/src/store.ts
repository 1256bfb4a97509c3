/**
 * The port between a computer's workspace and durable storage (ARCH-3, PER-3, PER-4).
 *
 * Two shapes of source, because providers differ (PRV-5):
 * - Docker bind-mounts `DATA_DIR/homes/<home key>` as the live workspace, so the local home IS
 *   the workspace: `checkpoint({ source: { kind: "local-dir" } })` fingerprints it, uploads it
 *   when object storage is configured, and advances the revision marker. Nothing is copied.
 * - Remote providers (E2B, Boat, the fake, …) export a tar stream:
 *   `checkpoint({ source: { kind: "archive", archive } })` validates it (PER-6) into the local
 *   home through staging + swap, then seals and uploads it when object storage is configured.
 *
 * Restores: `materialize` brings the local home up to a stored revision (downloading and
 * verifying the sealed object into staging, then swapping) and returns its path — what Docker
 * mounts; `openArchive` materializes and returns a tar stream — what `importWorkspace` takes.
 *
 * The revision lives on the computer row. The store never touches the database: it calls the
 * caller's `commit(revision)` (a conditional update on the previous revision) after the new
 * revision is durable, and only then deletes the previous object.
 */
import type { Readable } from "node:stream";
import type { FileEntry } from "@rakazo/sandbox";

export type CheckpointSource =
  /** A tar stream of the workspace, e.g. `sandbox.files.exportWorkspace()`. Untrusted. */
  | { readonly kind: "archive"; readonly archive: Readable }
  /** The local home directory itself is the workspace (Docker's bind mount). */
  | { readonly kind: "local-dir" };

export interface HomeRef {
  /** The computer's `homeKey`: names the local folder and is the objects' storage id. */
  readonly homeKey: string;
  /** The home's data key; required by the object store, ignored by the local one. */
  readonly dataKey?: Uint8Array | undefined;
}

export interface CheckpointRequest extends HomeRef {
  /** The revision the computer row holds now (0 = never checkpointed). */
  readonly previousRevision: number;
  readonly source: CheckpointSource;
  /**
   * Records `revision` as the latest (e.g. `update computers set home_revision = $rev where
   * id = $id and home_revision = $previous`). Returns false if the row moved on meanwhile; the
   * store then discards what it uploaded and fails with `CHECKPOINT_CONFLICT`.
   */
  readonly commit: (revision: number) => Promise<boolean>;
  /** Save even if the fingerprint did not change. */
  readonly force?: boolean;
}

export interface CheckpointResult {
  /** `unchanged`: the fingerprint equals the last checkpoint's; nothing was written. */
  readonly status: "saved" | "unchanged";
  /** The revision now stored (the previous one when unchanged). */
  readonly revision: number;
  readonly files: number;
  readonly bytes: number;
}

export interface MaterializeRequest extends HomeRef {
  /** The revision the computer row holds; 0 = never checkpointed (an empty home). */
  readonly revision: number;
}

export interface StoredObject {
  readonly homeKey: string;
  readonly revision: number;
  /** The revision its chain starts at: itself for a base, earlier for a delta (./chain.ts). */
  readonly base: number;
  readonly key: string;
  readonly lastModified: Date | undefined;
}

export interface AgentHomeStore {
  readonly kind: "local" | "object";
  /** `DATA_DIR/homes/<home key>`: the local home (Docker's mount, the object store's cache). */
  homeDir(homeKey: string): string;
  checkpoint(request: CheckpointRequest): Promise<CheckpointResult>;
  /** Brings the local home up to `revision`; returns its path. */
  materialize(request: MaterializeRequest): Promise<string>;
  /**
   * The stored workspace at `revision` as a tar stream, for `importWorkspace`. The home stays
   * locked until the stream closes (consume or destroy it).
   */
  openArchive(request: MaterializeRequest): Promise<Readable>;
  /** FIL-1: direct children of `path` in the stored workspace. */
  listFiles(request: MaterializeRequest & { readonly path: string }): Promise<FileEntry[]>;
  /** FIL-1: a file of the stored workspace; `FILE_TOO_LARGE` past `maxBytes`. */
  readFile(
    request: MaterializeRequest & { readonly path: string; readonly maxBytes: number },
  ): Promise<Buffer>;
  /** Removes the local home, its metadata and every stored object of the home. */
  destroy(homeKey: string): Promise<void>;
  /** Every stored object (object store only; the local store has none). */
  listObjects(): AsyncIterable<StoredObject>;
  deleteObject(object: Pick<StoredObject, "key">): Promise<void>;
}

export interface HomeLimits {
  readonly maxEntries: number;
  readonly maxTotalBytes: number;
}

export const DEFAULT_HOME_LIMITS: HomeLimits = { maxEntries: 50_000, maxTotalBytes: 8 * 1024 ** 3 };
