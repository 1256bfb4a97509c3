/**
 * Restoring a revision that may be a delta (./chain.ts): the tip's index names the chain; every
 * delta is downloaded and verified (each segment's tag, then the final one) into a private work
 * folder, the links are checked (each delta names its parent object's header digest, the first
 * one the base's), and only then is the base streamed into a staging folder and the deltas
 * applied in order — deletions, then their entries, each validated like any archive (PER-6).
 * The home is swapped in after the last delta applied; any failure leaves it untouched.
 */
import { createReadStream, createWriteStream } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { extractIntoStaging, stagingPath, swapStaging } from "@rakazo/sandbox";
import { type ChainState, type DeltaIndex, readDeltaFile } from "./chain.ts";
import { HomeStoreError } from "./errors.ts";
import { type HomeFolders, toHomeError } from "./home-folders.ts";
import { createUnsealStream, type SealKind, type SealOptions } from "./seal.ts";

/** A stored object opened for reading: its header read, its plaintext verified as it streams. */
export interface OpenedObject {
  readonly kind: SealKind;
  readonly digest: string;
  readonly plain: Readable;
}

/** Opens the object of `revision`; `kind` refuses the other kind (CHECKPOINT_TAMPERED). */
export type OpenObject = (revision: number, kind?: SealKind) => Promise<OpenedObject>;

interface FetchedDelta {
  readonly revision: number;
  readonly file: string;
  readonly index: DeltaIndex;
  readonly tarOffset: number;
  readonly digest: string;
}

/** What a restore learned of the chain; `baseBytes` is undefined when the tip is a base. */
export type RestoredChain = Omit<ChainState, "baseBytes"> & { readonly baseBytes: number | undefined };

const UNLIMITED = { maxEntries: Number.MAX_SAFE_INTEGER, maxTotalBytes: Number.MAX_SAFE_INTEGER };

function broken(message: string): HomeStoreError {
  return new HomeStoreError("CHECKPOINT_TAMPERED", `the chain does not link up: ${message}`);
}

/** Deltas downloaded at once; each is a small object, and the base streams beside them. */
const DELTA_DOWNLOADS = 4;

/**
 * `fetchOne` of every revision, at most `DELTA_DOWNLOADS` at a time, in the revisions' order.
 * After a failure no new download starts, and it is thrown once every started one has settled,
 * so nothing writes into the work folder after the restore cleaned it up.
 */
async function fetchAll(
  revisions: readonly number[],
  fetchOne: (revision: number) => Promise<FetchedDelta>,
): Promise<FetchedDelta[]> {
  const fetched: FetchedDelta[] = new Array(revisions.length);
  let next = 0;
  let failure: { error: unknown } | undefined;
  const lane = async (): Promise<void> => {
    while (next < revisions.length && !failure) {
      const at = next;
      next += 1;
      try {
        fetched[at] = await fetchOne(revisions[at] as number);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(DELTA_DOWNLOADS, revisions.length) }, lane));
  if (failure) throw failure.error;
  return fetched;
}

/** Every delta names the same base and was made on the one before it. */
function checkDeltaLinks(deltas: readonly FetchedDelta[], base: number): void {
  for (const delta of deltas) {
    if (delta.index.chain[0] !== base) throw broken(`revision ${delta.revision} names another base`);
  }
  for (let i = 1; i < deltas.length; i += 1) {
    const delta = deltas[i] as FetchedDelta;
    if (delta.index.parentHeader !== (deltas[i - 1] as FetchedDelta).digest)
      throw broken(`revision ${delta.revision} was made on another revision ${delta.revision - 1}`);
  }
}

export async function restoreChain(
  folders: HomeFolders,
  homeKey: string,
  revision: number,
  openObject: OpenObject,
): Promise<RestoredChain> {
  const tip = await openObject(revision);
  if (tip.kind === "base") {
    await folders.extractInto(homeKey, tip.plain);
    return { revisions: [revision], tipHeader: tip.digest, baseBytes: undefined, deltaBytes: 0 };
  }
  const dir = folders.homeDir(homeKey);
  const work = stagingPath(dir, "-deltas");
  const tree = stagingPath(dir);
  await mkdir(work, { recursive: true, mode: 0o700 });
  try {
    const fetch = async (object: OpenedObject, at: number): Promise<FetchedDelta> => {
      const file = join(work, String(at));
      await pipeline(object.plain, createWriteStream(file, { mode: 0o600 }));
      return { revision: at, file, digest: object.digest, ...(await readDeltaFile(file, at)) };
    };
    const last = await fetch(tip, revision);
    const chain = last.index.chain;
    const base = chain[0] as number;
    // The base's download starts now and waits (backpressured) while the deltas download a few
    // at a time: a chain's restore pays its round trips once, not once per delta in turn.
    const opening = openObject(base, "base");
    opening.catch(() => {}); // awaited below; a failure before that must not escape as unhandled
    let first: OpenedObject | undefined;
    try {
      const deltas = [
        ...(await fetchAll(chain.slice(1), (at) => openObject(at, "delta").then((o) => fetch(o, at)))),
        last,
      ];
      checkDeltaLinks(deltas, base);
      first = await opening;
      if ((deltas[0] as FetchedDelta).index.parentHeader !== first.digest) {
        throw broken(`revision ${base + 1} was made on another base`);
      }
      await mkdir(tree, { mode: 0o755 });
      await extractIntoStaging(first.plain, tree, UNLIMITED, folders.extractOptions());
      for (const delta of deltas) {
        for (const path of delta.index.deleted) await rm(join(tree, path), { recursive: true, force: true });
        await extractIntoStaging(createReadStream(delta.file, { start: delta.tarOffset }), tree, UNLIMITED, {
          ...folders.extractOptions(),
          overlay: true,
        });
      }
    } finally {
      // Whatever stopped the restore, the base's download is not left open.
      (first ?? (await opening.catch(() => undefined)))?.plain.destroy();
    }
    await swapStaging(tree, dir, folders.owner);
    return {
      revisions: [...chain, revision],
      tipHeader: tip.digest,
      baseBytes: last.index.baseBytes,
      deltaBytes: last.index.deltaBytes,
    };
  } catch (error) {
    await rm(tree, { recursive: true, force: true });
    throw toHomeError(error);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/**
 * Unseals a downloaded object as it streams; resolves once its header named the expected
 * identity (and kind, when given), before any plaintext is read.
 */
export async function openSealed(
  body: Readable,
  options: Omit<SealOptions, "onHeader">,
  key: string,
): Promise<OpenedObject> {
  let onHeader: (header: { kind: SealKind; digest: string }) => void = () => {};
  const plain = createUnsealStream({ ...options, onHeader: (header) => onHeader(header) });
  const header = new Promise<{ kind: SealKind; digest: string }>((resolve, reject) => {
    onHeader = resolve;
    plain.once("error", reject);
    plain.once("end", () => reject(new HomeStoreError("CHECKPOINT_TAMPERED", `${key} has no header`)));
  });
  // The reader attaches its own handlers a moment later; an early failure (a wrong header)
  // must wait in `plain.errored` for it instead of escaping as an uncaught error.
  plain.on("error", () => {});
  body.on("error", (error) => plain.destroy(error));
  body.pipe(plain);
  try {
    const { kind, digest } = await header;
    return { kind, digest, plain };
  } catch (error) {
    body.destroy();
    throw error;
  }
}
