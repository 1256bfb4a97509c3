/**
 * What the object store uploads for a checkpoint (./chain.ts): a delta of the entries that
 * changed since the last revision when the cache holds that revision's walk and the chain is
 * still short and light enough, otherwise a new base. Exported archives (remote providers) are
 * always bases: their extraction rewrites every file, so a walk cannot tell what changed.
 */
import { Readable } from "node:stream";
import { packDirectory } from "@rakazo/sandbox";
import {
  type ChainPolicy,
  type ChainState,
  deltaExclude,
  diffEntries,
  encodeDeltaPrefix,
  readFileIndex,
} from "./chain.ts";
import { isTransientBrowserFile } from "./exclude.ts";
import type { HomeFolders, HomeMetadata } from "./home-folders.ts";
import type { HomeManifest } from "./manifest.ts";
import type { SealKind } from "./seal.ts";
import type { CheckpointRequest } from "./store.ts";

export interface PlannedCheckpoint {
  readonly kind: SealKind;
  /** The revision the chain of this object starts at (itself for a base). */
  readonly base: number;
  readonly plaintext: Readable;
  /** Bytes of file content this object carries. */
  readonly bytes: number;
  /** The chain once this object is the latest, given its header digest. */
  readonly chain: (tipHeader: string) => ChainState;
}

export async function planCheckpoint(
  folders: HomeFolders,
  request: CheckpointRequest,
  meta: HomeMetadata | undefined,
  manifest: HomeManifest,
  dir: string,
  policy: ChainPolicy,
): Promise<PlannedCheckpoint> {
  const revision = request.previousRevision + 1;
  const last = meta?.chain;
  const eligible =
    request.source.kind === "local-dir" &&
    meta?.state === "clean" &&
    meta.revision === request.previousRevision &&
    last !== undefined &&
    last.revisions.at(-1) === request.previousRevision &&
    last.revisions.length - 1 < policy.maxDeltas;
  const previous = eligible
    ? await readFileIndex(folders.fileIndexPath(request.homeKey), request.previousRevision)
    : undefined;
  if (last && previous) {
    const changes = diffEntries(previous, manifest.entries);
    const deltaBytes = last.deltaBytes + changes.bytes;
    if (deltaBytes <= policy.maxDeltaRatio * last.baseBytes) {
      const prefix = encodeDeltaPrefix({
        format: 1,
        chain: last.revisions,
        parentHeader: last.tipHeader,
        deleted: changes.deleted,
        baseBytes: last.baseBytes,
        deltaBytes,
      });
      const pack = packDirectory(dir, { exclude: deltaExclude(changes) });
      const base = last.revisions[0] as number;
      return {
        kind: "delta",
        base,
        plaintext: Readable.from(prefixed(prefix, pack)),
        bytes: changes.bytes,
        chain: (tipHeader) => ({
          revisions: [...last.revisions, revision],
          tipHeader,
          baseBytes: last.baseBytes,
          deltaBytes,
        }),
      };
    }
  }
  return {
    kind: "base",
    base: revision,
    plaintext: packDirectory(dir, { exclude: isTransientBrowserFile }),
    bytes: manifest.bytes,
    chain: (tipHeader) => ({ revisions: [revision], tipHeader, baseBytes: manifest.bytes, deltaBytes: 0 }),
  };
}

async function* prefixed(prefix: Buffer, rest: Readable): AsyncGenerator<Buffer> {
  yield prefix;
  try {
    for await (const chunk of rest) yield chunk as Buffer;
  } finally {
    rest.destroy();
  }
}
