import { randomBytes } from "node:crypto";
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { isHomeStoreError } from "./errors.ts";
import { createSealStream, createUnsealStream, headerDigest, type SealIdentity } from "./seal.ts";

const dataKey = randomBytes(32);
const SEG = 1024;

async function collect(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function seal(plain: Buffer, id: SealIdentity = { storageId: "home_a", revision: 3 }): Promise<Buffer> {
  return collect(Readable.from([plain]).pipe(createSealStream({ ...id, dataKey, segmentSize: SEG })));
}

async function unseal(
  sealed: Buffer,
  id: SealIdentity = { storageId: "home_a", revision: 3 },
  key = dataKey,
) {
  // Feed in odd-sized chunks so segment boundaries never line up with reads.
  const chunks: Buffer[] = [];
  for (let i = 0; i < sealed.length; i += 777) chunks.push(sealed.subarray(i, i + 777));
  return collect(Readable.from(chunks).pipe(createUnsealStream({ ...id, dataKey: key })));
}

function headerLength(sealed: Buffer): number {
  return 7 + sealed.readUInt16BE(5);
}

async function expectTampered(promise: Promise<unknown>): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(isHomeStoreError(error, "CHECKPOINT_TAMPERED"), String(error)).toBe(true);
}

describe("sealed checkpoints", () => {
  it.each([0, 1, SEG - 1, SEG, SEG + 1, 3 * SEG, 5 * SEG + 17])("round-trips %i bytes", async (n) => {
    const plain = randomBytes(n);
    const sealed = await seal(plain);
    expect(sealed.includes(plain.subarray(0, 64)) && n >= 64).toBe(false);
    expect(await unseal(sealed)).toEqual(plain);
  });

  it("refuses one flipped byte anywhere", async () => {
    const sealed = await seal(randomBytes(3 * SEG + 5));
    for (const at of [3, 10, headerLength(sealed) + 5, sealed.length - 1]) {
      const bad = Buffer.from(sealed);
      bad[at] = (bad[at] as number) ^ 1;
      await expectTampered(unseal(bad));
    }
  });

  it("refuses a dropped last segment and a truncated object", async () => {
    const sealed = await seal(randomBytes(3 * SEG + 5));
    const full = SEG + 16;
    const h = headerLength(sealed);
    await expectTampered(unseal(sealed.subarray(0, h + 3 * full)));
    await expectTampered(unseal(sealed.subarray(0, sealed.length - 1)));
    await expectTampered(unseal(sealed.subarray(0, h)));
    await expectTampered(unseal(sealed.subarray(0, 5)));
  });

  it("refuses swapped segments", async () => {
    const sealed = await seal(randomBytes(3 * SEG + 5));
    const full = SEG + 16;
    const h = headerLength(sealed);
    const s0 = sealed.subarray(h, h + full);
    const s1 = sealed.subarray(h + full, h + 2 * full);
    const swapped = Buffer.concat([sealed.subarray(0, h), s1, s0, sealed.subarray(h + 2 * full)]);
    await expectTampered(unseal(swapped));
  });

  it("refuses an object of another revision or another home, even with its header rewritten", async () => {
    const plain = randomBytes(2 * SEG);
    const otherRevision = await seal(plain, { storageId: "home_a", revision: 2 });
    await expectTampered(unseal(otherRevision));
    const otherHome = await seal(plain, { storageId: "home_b", revision: 3 });
    await expectTampered(unseal(otherHome, { storageId: "home_a", revision: 3 }));
    // Splice: our header, the other revision's segments.
    const ours = await seal(plain);
    const spliced = Buffer.concat([
      ours.subarray(0, headerLength(ours)),
      otherRevision.subarray(headerLength(otherRevision)),
    ]);
    await expectTampered(unseal(spliced));
    // One segment from another object of the same home and revision.
    const twin = await seal(plain);
    const h = headerLength(ours);
    const mixed = Buffer.concat([ours.subarray(0, h + SEG + 16), twin.subarray(h + SEG + 16)]);
    await expectTampered(unseal(mixed));
  });

  it("tells a delta from a base, and a rewritten version byte does not fool it", async () => {
    const id = { storageId: "home_a", revision: 3 };
    const plain = randomBytes(2 * SEG);
    const sealDelta = (onHeader?: (h: { kind: string; digest: string }) => void) =>
      collect(
        Readable.from([plain]).pipe(
          createSealStream({
            ...id,
            dataKey,
            segmentSize: SEG,
            kind: "delta",
            ...(onHeader ? { onHeader } : {}),
          }),
        ),
      );
    let sealedHeader = "";
    const delta = await sealDelta((h) => {
      sealedHeader = h.digest;
    });
    const seen: string[] = [];
    const opened = await collect(
      Readable.from([delta]).pipe(
        createUnsealStream({ ...id, dataKey, kind: "delta", onHeader: (h) => seen.push(h.kind, h.digest) }),
      ),
    );
    expect(opened).toEqual(plain);
    expect(seen).toEqual(["delta", sealedHeader]);
    expect(sealedHeader).toBe(headerDigest(delta.subarray(0, headerLength(delta))));
    // Asked for a base, a delta is refused before any plaintext; and the other way round.
    await expectTampered(
      collect(Readable.from([delta]).pipe(createUnsealStream({ ...id, dataKey, kind: "base" }))),
    );
    await expectTampered(
      collect(Readable.from([await seal(plain)]).pipe(createUnsealStream({ ...id, dataKey, kind: "delta" }))),
    );
    // The version byte is authenticated: a delta rewritten to read as a base fails its tags.
    const rewritten = Buffer.from(delta);
    rewritten[4] = 1;
    await expectTampered(unseal(rewritten));
  });

  it("refuses the wrong data key", async () => {
    await expectTampered(unseal(await seal(randomBytes(10)), undefined, randomBytes(32)));
  });
});
