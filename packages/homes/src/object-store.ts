/**
 * PER-4: the bucket is the source of truth; `DATA_DIR/homes` is a cache. A checkpoint packs
 * the home (directories and regular files only, transient browser files left out), seals it
 * (./seal.ts) and uploads `homes/<home key>/<revision>`; after the upload completes the caller's
 * `commit` advances the row's revision, and only then is the previous object deleted. A crash at
 * any point leaves the previous object and the row's revision intact: the previous revision stays
 * restorable, and the reconciler removes what was left behind (PER-5).
 *
 * Reads and boots call `materialize`, which compares the cache's metadata with the row's
 * revision and, if they differ (or a checkpoint was interrupted), downloads the object, verifies
 * every segment into staging and swaps it in.
 */
import { lstat, mkdir } from "node:fs/promises";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import {
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  S3Client,
  type S3ClientConfig,
} from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import { type FileEntry, type FileOwner, packDirectory } from "@rakazo/sandbox";
import { type ChainPolicy, DEFAULT_CHAIN_POLICY, removeFileIndex, writeFileIndex } from "./chain.ts";
import { planCheckpoint } from "./chain-checkpoint.ts";
import { type OpenedObject, openSealed, restoreChain } from "./chain-restore.ts";
import { stageCheckpoint } from "./checkpoint-stage.ts";
import { HomeStoreError, isHomeStoreError } from "./errors.ts";
import { isTransientBrowserFile } from "./exclude.ts";
import { HomeFolders } from "./home-folders.ts";
import { metadata } from "./local-store.ts";
import type { HomeLock } from "./lock.ts";
import { computeManifest } from "./manifest.ts";
import { createSealStream, type SealKind } from "./seal.ts";
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

export interface ObjectStorageConfig {
  /** `OBJECT_STORAGE_BUCKET`. */
  readonly bucket: string;
  /** e.g. `http://127.0.0.1:9000`; omitted for AWS itself. */
  readonly endpoint?: string;
  readonly region?: string;
  readonly accessKeyId?: string;
  readonly secretAccessKey?: string;
  /**
   * A request whose socket stays silent this long fails (and is retried by the SDK, then the
   * job): without it an unreachable store that accepts connections but never answers would
   * hang a checkpoint until its job expires. Default 60 s of silence, 5 s to connect.
   */
  readonly requestTimeoutMs?: number;
  readonly connectionTimeoutMs?: number;
}

export interface ObjectAgentHomeStoreOptions {
  readonly dataDir: string;
  readonly storage: ObjectStorageConfig;
  readonly lock?: HomeLock;
  readonly limits?: HomeLimits;
  /** Owner of every restored home; see LocalAgentHomeStoreOptions.owner. */
  readonly owner?: FileOwner;
  /** Multipart part size; memory use is about `partSize * 2`. */
  readonly partSize?: number;
  /** When a checkpoint writes a new base instead of a delta (./chain.ts). */
  readonly chain?: ChainPolicy;
}

/** Multipart upload defaults: part size and parts in flight (memory ≈ size × (queue + 1)). */
export const DEFAULT_PART_SIZE = 8 * 1024 * 1024;
export const DEFAULT_UPLOAD_QUEUE = 2;

/**
 * `homes/<home key>/<revision>` for a base, `homes/<home key>/<revision>.d<base>` for a delta:
 * the listing alone tells the reconciler which objects the latest revision's chain needs. The
 * key is only a hint for deletion; what a restore applies comes from the sealed indexes.
 */
export function objectKey(homeKey: string, revision: number, base = revision): string {
  return base === revision ? `homes/${homeKey}/${revision}` : `homes/${homeKey}/${revision}.d${base}`;
}

const KEY_PATTERN = /^homes\/([^/]+)\/(\d+)(?:\.d(\d+))?$/;

export function createS3Client(config: ObjectStorageConfig): S3Client {
  const options: S3ClientConfig = {
    region: config.region ?? "us-east-1",
    forcePathStyle: true,
    requestHandler: {
      requestTimeout: config.requestTimeoutMs ?? 60_000,
      connectionTimeout: config.connectionTimeoutMs ?? 5_000,
      // Otherwise the handler only logs a warning and the request waits on.
      throwOnRequestTimeout: true,
    },
    ...(config.endpoint ? { endpoint: config.endpoint } : {}),
    ...(config.accessKeyId && config.secretAccessKey
      ? { credentials: { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey } }
      : {}),
  };
  return new S3Client(options);
}

function requireKey(dataKey: Uint8Array | undefined, homeKey: string): Uint8Array {
  if (!dataKey) throw new HomeStoreError("KEY_UNAVAILABLE", `no data key for home ${homeKey}`);
  return dataKey;
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await lstat(path)).isDirectory();
  } catch {
    return false;
  }
}

function isNotFound(error: unknown): boolean {
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e?.name === "NoSuchKey" || e?.name === "NotFound" || e?.$metadata?.httpStatusCode === 404;
}

export class ObjectAgentHomeStore implements AgentHomeStore {
  readonly kind = "object" as const;
  readonly client: S3Client;
  readonly bucket: string;
  readonly #folders: HomeFolders;
  readonly #partSize: number;
  readonly #chain: ChainPolicy;

  constructor(options: ObjectAgentHomeStoreOptions) {
    this.#folders = new HomeFolders({
      dataDir: options.dataDir,
      limits: options.limits ?? DEFAULT_HOME_LIMITS,
      owner: options.owner,
      ...(options.lock ? { lock: options.lock } : {}),
    });
    this.client = createS3Client(options.storage);
    this.bucket = options.storage.bucket;
    this.#partSize = options.partSize ?? DEFAULT_PART_SIZE;
    this.#chain = options.chain ?? DEFAULT_CHAIN_POLICY;
  }

  homeDir(homeKey: string): string {
    return this.#folders.homeDir(homeKey);
  }

  async checkpoint(request: CheckpointRequest): Promise<CheckpointResult> {
    const { homeKey, previousRevision } = request;
    const dataKey = requireKey(request.dataKey, homeKey);
    return this.#folders.withLock(homeKey, async () => {
      const meta = await this.#folders.readMetadata(homeKey);
      const { dir, archiveDigest, manifest, unchanged } = await stageCheckpoint(
        this.#folders,
        request,
        meta,
        {
          // The cache is about to hold content newer than any stored revision.
          beforeExtract: () =>
            this.#folders.writeMetadata(
              metadata(homeKey, meta?.revision ?? 0, null, meta?.archiveDigest ?? null, "pending"),
            ),
        },
      );
      if (unchanged) {
        if (archiveDigest !== null && meta)
          await this.#folders.writeMetadata({ ...meta, savedAt: new Date().toISOString() });
        return {
          status: "unchanged",
          revision: previousRevision,
          files: manifest.files,
          bytes: manifest.bytes,
        };
      }
      const revision = previousRevision + 1;
      const plan = await planCheckpoint(this.#folders, request, meta, manifest, dir, this.#chain);
      const key = objectKey(homeKey, revision, plan.base);
      let tipHeader = "";
      const sealed = plan.plaintext.pipe(
        createSealStream({
          dataKey,
          storageId: homeKey,
          revision,
          kind: plan.kind,
          onHeader: (header) => {
            tipHeader = header.digest;
          },
        }),
      );
      plan.plaintext.on("error", (error) => sealed.destroy(error));
      try {
        await new Upload({
          client: this.client,
          params: { Bucket: this.bucket, Key: key, Body: sealed, ContentType: "application/octet-stream" },
          partSize: this.#partSize,
          queueSize: DEFAULT_UPLOAD_QUEUE,
          leavePartsOnError: false,
        }).done();
      } catch (error) {
        throw new HomeStoreError("STORAGE_ERROR", `upload of ${key} failed: ${(error as Error).message}`, {
          cause: error,
        });
      }
      // A leftover of an earlier attempt at this revision under another key (a crash before its
      // commit) goes before the commit, so exactly one object carries each committed revision.
      let stored: StoredObject[];
      try {
        stored = await this.#listHome(homeKey);
        for (const stale of stored.filter((o) => o.revision === revision && o.key !== key))
          await this.#delete(stale.key);
      } catch (error) {
        await this.#delete(key).catch(() => {});
        if (isHomeStoreError(error)) throw error;
        throw new HomeStoreError(
          "STORAGE_ERROR",
          `cleanup before ${key} failed: ${(error as Error).message}`,
          {
            cause: error,
          },
        );
      }
      if (!(await request.commit(revision))) {
        await this.#delete(key).catch(() => {});
        throw new HomeStoreError(
          "CHECKPOINT_CONFLICT",
          `revision ${previousRevision} of ${homeKey} moved on`,
        );
      }
      const index = this.#folders.fileIndexPath(homeKey);
      if (request.source.kind === "local-dir") await writeFileIndex(index, revision, manifest.entries);
      else await removeFileIndex(index);
      await this.#folders.writeMetadata({
        ...metadata(homeKey, revision, manifest.digest, archiveDigest),
        chain: plan.chain(tipHeader),
      });
      // A new base retires the previous chain; a failure here leaves orphans the reconciler deletes.
      if (plan.kind === "base") {
        for (const old of stored.filter((o) => o.revision < revision))
          await this.#delete(old.key).catch(() => {});
      }
      return { status: "saved", revision, files: manifest.files, bytes: manifest.bytes };
    });
  }

  async materialize(request: MaterializeRequest): Promise<string> {
    return this.#folders.withLock(request.homeKey, () => this.#refresh(request));
  }

  async #refresh(request: MaterializeRequest): Promise<string> {
    const { homeKey, revision } = request;
    const dir = this.#folders.homeDir(homeKey);
    const meta = await this.#folders.readMetadata(homeKey);
    // A cache folder that was removed (it is only a cache) is downloaded again, never recreated
    // empty: an empty home would be mounted and then checkpointed over the stored one.
    if (meta?.state === "clean" && meta.revision === revision && (await isDirectory(dir))) return dir;
    if (revision === 0) {
      // Never checkpointed: nothing to download. Whatever the folder holds is newer than any
      // checkpoint (for Docker, the live home), so it is kept.
      await mkdir(dir, { recursive: true });
      return dir;
    }
    const dataKey = requireKey(request.dataKey, homeKey);
    const stored = await this.#listHome(homeKey);
    const chain = await restoreChain(this.#folders, homeKey, revision, (at, kind) =>
      this.#open(stored, homeKey, at, dataKey, kind),
    );
    const manifest = await computeManifest(dir, isTransientBrowserFile);
    await writeFileIndex(this.#folders.fileIndexPath(homeKey), revision, manifest.entries);
    await this.#folders.writeMetadata({
      ...metadata(homeKey, revision, manifest.digest, null),
      chain: { ...chain, baseBytes: chain.baseBytes ?? manifest.bytes },
    });
    return dir;
  }

  /** Downloads the object of revision `at` and unseals it as it streams (./chain-restore.ts). */
  async #open(
    stored: readonly StoredObject[],
    homeKey: string,
    at: number,
    dataKey: Uint8Array,
    kind?: SealKind,
  ): Promise<OpenedObject> {
    const found = stored.filter((o) => o.revision === at);
    const key = found.at(-1)?.key ?? objectKey(homeKey, at);
    let body: Readable;
    try {
      const object = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      body = object.Body as Readable;
    } catch (error) {
      if (isNotFound(error)) throw new HomeStoreError("CHECKPOINT_NOT_FOUND", `${key} is not in the bucket`);
      throw new HomeStoreError("STORAGE_ERROR", `download of ${key} failed: ${(error as Error).message}`, {
        cause: error,
      });
    }
    return openSealed(body, { dataKey, storageId: homeKey, revision: at, ...(kind ? { kind } : {}) }, key);
  }

  async openArchive(request: MaterializeRequest): Promise<Readable> {
    const release = await this.#folders.acquire(request.homeKey);
    try {
      const dir = await this.#refresh(request);
      const archive = packDirectory(dir, { exclude: isTransientBrowserFile });
      archive.once("close", () => void release());
      return archive;
    } catch (error) {
      await release();
      throw error;
    }
  }

  async listFiles(request: MaterializeRequest & { readonly path: string }): Promise<FileEntry[]> {
    return listHomeFiles(await this.materialize(request), request.path);
  }

  async readFile(
    request: MaterializeRequest & { readonly path: string; readonly maxBytes: number },
  ): Promise<Buffer> {
    return readHomeFile(await this.materialize(request), request.path, request.maxBytes);
  }

  async destroy(homeKey: string): Promise<void> {
    await this.#folders.withLock(homeKey, async () => {
      const keys: string[] = [];
      for await (const object of this.#list(`homes/${homeKey}/`)) keys.push(object.key);
      for (let i = 0; i < keys.length; i += 1000) {
        await this.client.send(
          new DeleteObjectsCommand({
            Bucket: this.bucket,
            Delete: { Objects: keys.slice(i, i + 1000).map((Key) => ({ Key })), Quiet: true },
          }),
        );
      }
      await this.#folders.removeHome(homeKey);
    });
  }

  listObjects(): AsyncIterable<StoredObject> {
    return this.#list("homes/");
  }

  async deleteObject(object: Pick<StoredObject, "key">): Promise<void> {
    await this.#delete(object.key);
  }

  /** Every object of one home, oldest revision first. */
  async #listHome(homeKey: string): Promise<StoredObject[]> {
    const out: StoredObject[] = [];
    try {
      for await (const object of this.#list(`homes/${homeKey}/`)) out.push(object);
    } catch (error) {
      throw new HomeStoreError("STORAGE_ERROR", `listing of ${homeKey} failed: ${(error as Error).message}`, {
        cause: error,
      });
    }
    return out.sort(
      (a, b) =>
        a.revision - b.revision || (a.lastModified?.getTime() ?? 0) - (b.lastModified?.getTime() ?? 0),
    );
  }

  async *#list(prefix: string): AsyncIterable<StoredObject> {
    let token: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ContinuationToken: token }),
      );
      for (const item of page.Contents ?? []) {
        const match = KEY_PATTERN.exec(item.Key ?? "");
        if (!match) continue;
        yield {
          homeKey: match[1] as string,
          revision: Number(match[2]),
          base: match[3] === undefined ? Number(match[2]) : Number(match[3]),
          key: item.Key as string,
          lastModified: item.LastModified,
        };
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  async #delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }

  /** Streams the sealed object as stored (tests and diagnostics). */
  async download(homeKey: string, revision: number, sink: NodeJS.WritableStream): Promise<void> {
    const key = (await this.#listHome(homeKey)).filter((o) => o.revision === revision).at(-1)?.key;
    const object = await this.client.send(
      new GetObjectCommand({ Bucket: this.bucket, Key: key ?? objectKey(homeKey, revision) }),
    );
    await pipeline(object.Body as Readable, sink);
  }
}
