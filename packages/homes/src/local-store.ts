/**
 * PER-3: the local home store. `DATA_DIR/homes/<home key>` holds the latest workspace (the
 * only copy: latest-only), `DATA_DIR/home-revisions/<home key>.json` its revision and
 * fingerprint. Archive checkpoints are staged and swapped in whole; checkpoints of one home are
 * serialized (in-process mutex + cross-process lock).
 */
import { mkdir } from "node:fs/promises";
import type { Readable } from "node:stream";
import { type FileEntry, type FileOwner, packDirectory } from "@rakazo/sandbox";
import { stageCheckpoint } from "./checkpoint-stage.ts";
import { HomeStoreError } from "./errors.ts";
import { isTransientBrowserFile } from "./exclude.ts";
import { HomeFolders, type HomeMetadata } from "./home-folders.ts";
import type { HomeLock } from "./lock.ts";
import {
  type AgentHomeStore,
  type CheckpointRequest,
  type CheckpointResult,
  DEFAULT_HOME_LIMITS,
  type HomeLimits,
  type MaterializeRequest,
  type StoredObject,
} from "./store.ts";
import { listHomeFiles, readHomeFile } from "./stored-files.ts";

export interface LocalAgentHomeStoreOptions {
  readonly dataDir: string;
  readonly lock?: HomeLock;
  readonly limits?: HomeLimits;
  /**
   * Owner of every restored home (files and folders); default: this process's. Set it to the
   * uid/gid a container runs as when it bind-mounts the home (Docker, PRV-5: 1000:1000).
   */
  readonly owner?: FileOwner;
}

export class LocalAgentHomeStore implements AgentHomeStore {
  readonly kind = "local" as const;
  protected readonly folders: HomeFolders;

  constructor(options: LocalAgentHomeStoreOptions) {
    this.folders = new HomeFolders({
      dataDir: options.dataDir,
      limits: options.limits ?? DEFAULT_HOME_LIMITS,
      owner: options.owner,
      ...(options.lock ? { lock: options.lock } : {}),
    });
  }

  homeDir(homeKey: string): string {
    return this.folders.homeDir(homeKey);
  }

  async checkpoint(request: CheckpointRequest): Promise<CheckpointResult> {
    const { homeKey, previousRevision } = request;
    return this.folders.withLock(homeKey, async () => {
      const meta = await this.folders.readMetadata(homeKey);
      const { archiveDigest, manifest, unchanged } = await stageCheckpoint(this.folders, request, meta);
      if (unchanged) {
        return {
          status: "unchanged",
          revision: previousRevision,
          files: manifest.files,
          bytes: manifest.bytes,
        };
      }
      const revision = previousRevision + 1;
      if (!(await request.commit(revision))) {
        throw new HomeStoreError(
          "CHECKPOINT_CONFLICT",
          `revision ${previousRevision} of ${homeKey} moved on`,
        );
      }
      await this.folders.writeMetadata(metadata(homeKey, revision, manifest.digest, archiveDigest));
      return { status: "saved", revision, files: manifest.files, bytes: manifest.bytes };
    });
  }

  async materialize(request: MaterializeRequest): Promise<string> {
    return this.folders.withLock(request.homeKey, async () => {
      const dir = this.folders.homeDir(request.homeKey);
      await mkdir(dir, { recursive: true });
      return dir;
    });
  }

  async openArchive(request: MaterializeRequest): Promise<Readable> {
    const release = await this.folders.acquire(request.homeKey);
    try {
      const dir = this.folders.homeDir(request.homeKey);
      await mkdir(dir, { recursive: true });
      const archive = packDirectory(dir, { exclude: isTransientBrowserFile });
      archive.once("close", () => void release());
      return archive;
    } catch (error) {
      await release();
      throw error;
    }
  }

  async listFiles(request: MaterializeRequest & { readonly path: string }): Promise<FileEntry[]> {
    const dir = await this.materialize(request);
    return listHomeFiles(dir, request.path);
  }

  async readFile(
    request: MaterializeRequest & { readonly path: string; readonly maxBytes: number },
  ): Promise<Buffer> {
    const dir = await this.materialize(request);
    return readHomeFile(dir, request.path, request.maxBytes);
  }

  async destroy(homeKey: string): Promise<void> {
    await this.folders.withLock(homeKey, () => this.folders.removeHome(homeKey));
  }

  async *listObjects(): AsyncIterable<StoredObject> {}

  async deleteObject(): Promise<void> {}
}

export function metadata(
  homeKey: string,
  revision: number,
  manifest: string | null,
  archiveDigest: string | null,
  state: HomeMetadata["state"] = "clean",
): HomeMetadata {
  return { homeKey, revision, state, manifest, archiveDigest, savedAt: new Date().toISOString() };
}
