/**
 * The first half of every store's checkpoint: bring the source into the home folder (an
 * exported archive is extracted; a mounted home is read where it is), fingerprint it, and tell
 * whether it equals the last clean revision — then the store skips the save (PER-4's cheap
 * "nothing changed" path).
 */
import { createHash } from "node:crypto";
import { mkdir } from "node:fs/promises";
import { PassThrough, type Readable } from "node:stream";
import { isTransientBrowserFile } from "./exclude.ts";
import type { HomeFolders, HomeMetadata } from "./home-folders.ts";
import { computeManifest, type HomeManifest } from "./manifest.ts";
import type { CheckpointRequest } from "./store.ts";

export interface StagedCheckpoint {
  readonly dir: string;
  /** SHA-256 of the exported archive; null for a mounted home. */
  readonly archiveDigest: string | null;
  readonly manifest: HomeManifest;
  readonly unchanged: boolean;
}

/** Tees an archive through SHA-256 so an unchanged export can be recognised. */
function digestingArchive(archive: Readable): { stream: Readable; digest: () => string } {
  const hash = createHash("sha256");
  const tee = new PassThrough();
  tee.on("error", () => {}); // surfaced through `tee.errored` to the pipeline that consumes it
  archive.on("data", (chunk: Buffer) => hash.update(chunk));
  archive.on("error", (error) => tee.destroy(error));
  archive.pipe(tee);
  tee.on("close", () => {
    if (!archive.destroyed) archive.destroy();
  });
  return { stream: tee, digest: () => hash.digest("hex") };
}

export async function stageCheckpoint(
  folders: HomeFolders,
  request: CheckpointRequest,
  meta: HomeMetadata | undefined,
  options: { beforeExtract?: () => Promise<void> } = {},
): Promise<StagedCheckpoint> {
  const dir = folders.homeDir(request.homeKey);
  let archiveDigest: string | null = null;
  if (request.source.kind === "archive") {
    await options.beforeExtract?.();
    const { stream, digest } = digestingArchive(request.source.archive);
    await folders.extractInto(request.homeKey, stream);
    archiveDigest = digest();
  } else {
    await mkdir(dir, { recursive: true });
  }
  const manifest = await computeManifest(dir, isTransientBrowserFile);
  const unchanged =
    !request.force &&
    meta?.state === "clean" &&
    meta.revision === request.previousRevision &&
    (archiveDigest === null ? meta.manifest === manifest.digest : meta.archiveDigest === archiveDigest);
  return { dir, archiveDigest, manifest, unchanged };
}
