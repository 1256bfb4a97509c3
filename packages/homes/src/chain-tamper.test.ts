/**
 * The tampered-checkpoint and hostile-archive suites on deltas: every broken chain fails restore
 * with a stable code, and the home a host already had stays as it was (nothing swapped in, no
 * staging left behind).
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { DeleteObjectCommand } from "@aws-sdk/client-s3";
import { buildArchive } from "@rakazo/sandbox/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { encodeDeltaPrefix } from "./chain.ts";
import { type ObjectAgentHomeStore, objectKey } from "./object-store.ts";
import { createSealStream, headerDigest, type SealKind } from "./seal.ts";
import {
  chainRow,
  chainStore,
  checkpointHome,
  errorCode,
  getObject,
  putObject,
  storedTree,
} from "./testing/chain-fixtures.ts";
import { writeTree } from "./testing/fixtures.ts";
import { startTestS3Server, type TestS3Server } from "./testing/s3-server.ts";

let s3: TestS3Server;
let root: string;
const dataKey = randomBytes(32);
const SEG = 64 * 1024 + 16;
const K = "home_t";

beforeAll(async () => {
  s3 = await startTestS3Server();
});
afterAll(async () => {
  await s3.close();
});

const headerLength = (sealed: Buffer) => 7 + sealed.readUInt16BE(5);

async function seal(plain: Buffer, revision: number, kind: SealKind): Promise<Buffer> {
  const chunks: Buffer[] = [];
  const stream = Readable.from([plain]).pipe(createSealStream({ dataKey, storageId: K, revision, kind }));
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

let store: ObjectAgentHomeStore;
let dataDir: string;
/** Objects of home_t: base 1, deltas 2 and 3 on it; the same from a sibling host and another home. */
const objects: Record<string, Buffer> = {};

async function restoreFreshHost(): Promise<string> {
  await rm(join(dataDir, "homes", K), { recursive: true, force: true });
  await rm(join(dataDir, "home-revisions"), { recursive: true, force: true });
  await writeTree(store.homeDir(K), { "keep.txt": "previous home" });
  return errorCode(store.materialize({ homeKey: K, revision: 3, dataKey }));
}

async function expectUntouched(): Promise<void> {
  expect(await storedTree(store.homeDir(K))).toEqual({ "keep.txt": expect.any(String) });
  expect((await readdir(join(dataDir, "homes"))).filter((n) => n.startsWith(K))).toEqual([K]);
}

async function putBack(): Promise<void> {
  await putObject(store, objectKey(K, 1), objects.base as Buffer);
  await putObject(store, objectKey(K, 2, 1), objects.delta2 as Buffer);
  await putObject(store, objectKey(K, 3, 1), objects.delta3 as Buffer);
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "rakazo-chain-tamper-"));
  dataDir = join(root, "a");
  store = chainStore(s3, dataDir);
  const r = chainRow();
  await writeTree(store.homeDir(K), { "big.bin": randomBytes(300 * 1024), "a.txt": "one" });
  await checkpointHome(store, K, dataKey, r);
  objects.base = await getObject(store, objectKey(K, 1));
  await writeFile(join(store.homeDir(K), "a.txt"), "two");
  await checkpointHome(store, K, dataKey, r);
  objects.delta2 = await getObject(store, objectKey(K, 2, 1));
  // A sibling host restores revision 1 and saves another revision 2 (validly sealed, other parent
  // content is the same, but it is a different object).
  const sibling = chainStore(s3, join(root, "b"));
  await sibling.materialize({ homeKey: K, revision: 1, dataKey });
  await writeFile(join(sibling.homeDir(K), "a.txt"), "sibling");
  await checkpointHome(sibling, K, dataKey, chainRow(1));
  objects.siblingDelta2 = await getObject(store, objectKey(K, 2, 1));
  // …and a host that never saw it saves another revision 1 base.
  const stranger = chainStore(s3, join(root, "c"));
  await writeTree(stranger.homeDir(K), { "big.bin": randomBytes(300 * 1024), "a.txt": "stranger" });
  await checkpointHome(stranger, K, dataKey, chainRow(0));
  objects.siblingBase = await getObject(store, objectKey(K, 1));
  await putObject(store, objectKey(K, 1), objects.base);
  await putObject(store, objectKey(K, 2, 1), objects.delta2);
  await writeFile(join(store.homeDir(K), "a.txt"), "three");
  await checkpointHome(store, K, dataKey, { state: { revision: 2 }, commit: async () => true });
  objects.delta3 = await getObject(store, objectKey(K, 3, 1));
  const other = chainStore(s3, join(root, "d"));
  const o = chainRow();
  await writeTree(other.homeDir("home_u"), { "big.bin": randomBytes(300 * 1024), "a.txt": "u" });
  await checkpointHome(other, "home_u", dataKey, o);
  await writeFile(join(other.homeDir("home_u"), "a.txt"), "u2");
  await checkpointHome(other, "home_u", dataKey, o);
  objects.otherHome = await getObject(store, objectKey("home_u", 2, 1));
}, 60_000);
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});
beforeEach(putBack);

describe("tampered chains fail restore with a code and change nothing", () => {
  const flip = (object: Buffer, at: number) => {
    const bad = Buffer.from(object);
    bad[at] = (bad[at] as number) ^ 0x40;
    return bad;
  };
  const cases: [string, string, () => Promise<void>][] = [
    [
      "a flipped byte in a delta",
      "CHECKPOINT_TAMPERED",
      () =>
        putObject(
          store,
          objectKey(K, 2, 1),
          flip(objects.delta2 as Buffer, headerLength(objects.delta2 as Buffer) + 20),
        ),
    ],
    [
      "a truncated delta",
      "CHECKPOINT_TAMPERED",
      () => putObject(store, objectKey(K, 3, 1), (objects.delta3 as Buffer).subarray(0, -40)),
    ],
    [
      "a delta passed off as a base (version byte)",
      "CHECKPOINT_TAMPERED",
      () => putObject(store, objectKey(K, 2, 1), flip(objects.delta2 as Buffer, 4)),
    ],
    [
      "a delta copied from another revision",
      "CHECKPOINT_TAMPERED",
      () => putObject(store, objectKey(K, 3, 1), objects.delta2 as Buffer),
    ],
    [
      "a delta copied from another home",
      "CHECKPOINT_TAMPERED",
      () => putObject(store, objectKey(K, 2, 1), objects.otherHome as Buffer),
    ],
    [
      "a validly sealed delta of the same revision from another host",
      "CHECKPOINT_TAMPERED",
      () => putObject(store, objectKey(K, 2, 1), objects.siblingDelta2 as Buffer),
    ],
    [
      "a validly sealed base of the same revision from another host",
      "CHECKPOINT_TAMPERED",
      () => putObject(store, objectKey(K, 1), objects.siblingBase as Buffer),
    ],
    [
      "a whole-workspace object where a delta belongs",
      "CHECKPOINT_TAMPERED",
      async () =>
        putObject(
          store,
          objectKey(K, 2, 1),
          await seal(await buildArchive([{ name: "x", data: "x" }]), 2, "base"),
        ),
    ],
    [
      "a missing delta",
      "CHECKPOINT_NOT_FOUND",
      async () => {
        await store.client.send(new DeleteObjectCommand({ Bucket: store.bucket, Key: objectKey(K, 2, 1) }));
      },
    ],
    [
      "a dropped base segment",
      "CHECKPOINT_TAMPERED",
      () =>
        putObject(
          store,
          objectKey(K, 1),
          (objects.base as Buffer).subarray(0, headerLength(objects.base as Buffer) + 2 * SEG),
        ),
    ],
  ];

  it.each(cases)("%s", async (_name, code, tamper) => {
    await tamper();
    expect(await restoreFreshHost()).toBe(code);
    await expectUntouched();
    await putBack();
    await restoreFreshHost();
    expect((await storedTree(store.homeDir(K)))["a.txt"]).toBeDefined();
  });

  it("the untouched chain restores revision 3", async () => {
    expect(await restoreFreshHost()).toBe("none");
    const tree = await storedTree(store.homeDir(K));
    expect(Object.keys(tree).sort()).toEqual(["a.txt", "big.bin"]);
  });
});

describe("hostile deltas (PER-6) are refused and nothing is written", () => {
  const parentHeader = () =>
    headerDigest((objects.base as Buffer).subarray(0, headerLength(objects.base as Buffer)));
  const index = (overrides: Record<string, unknown> = {}) =>
    encodeDeltaPrefix({
      format: 1,
      chain: [1],
      parentHeader: parentHeader(),
      deleted: [],
      baseBytes: 1,
      deltaBytes: 1,
      ...overrides,
    } as Parameters<typeof encodeDeltaPrefix>[0]);
  const rawIndex = (json: string) => {
    const body = Buffer.from(json);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(body.length);
    return Buffer.concat([Buffer.from("RKZD"), length, body]);
  };
  const tar = (entries: Parameters<typeof buildArchive>[0]) => buildArchive(entries);
  const corpus: [string, string, () => Promise<Buffer>][] = [
    [
      "absolute path",
      "INVALID_ARCHIVE",
      async () => Buffer.concat([index(), await tar([{ name: "/etc/evil", data: "x" }])]),
    ],
    [
      "'..' escape",
      "INVALID_ARCHIVE",
      async () => Buffer.concat([index(), await tar([{ name: "a/../../evil", data: "x" }])]),
    ],
    [
      "symlink",
      "INVALID_ARCHIVE",
      async () =>
        Buffer.concat([index(), await tar([{ name: "big.bin", type: "symlink", linkname: "/etc/passwd" }])]),
    ],
    [
      "the same path twice",
      "INVALID_ARCHIVE",
      async () =>
        Buffer.concat([
          index(),
          await tar([
            { name: "a.txt", data: "1" },
            { name: "a.txt", data: "2" },
          ]),
        ]),
    ],
    [
      "a deletion with '..'",
      "INVALID_ARCHIVE",
      async () => Buffer.concat([index({ deleted: ["../../x"] }), await tar([])]),
    ],
    [
      "a deletion of the root",
      "INVALID_ARCHIVE",
      async () => Buffer.concat([index({ deleted: ["/"] }), await tar([])]),
    ],
    [
      "a chain that skips a revision",
      "INVALID_ARCHIVE",
      async () => Buffer.concat([index({ chain: [0] }), await tar([])]),
    ],
    [
      "an index that is not JSON",
      "INVALID_ARCHIVE",
      async () => Buffer.concat([rawIndex("{nope"), await tar([])]),
    ],
    ["no index at all", "INVALID_ARCHIVE", async () => tar([{ name: "a.txt", data: "x" }])],
    [
      "a size bomb past the byte limit",
      "CHECKPOINT_TOO_LARGE",
      async () => Buffer.concat([index(), await tar([{ name: "huge", data: randomBytes(3 * 1024 * 1024) }])]),
    ],
  ];

  it.each(corpus)("%s", async (_name, code, make) => {
    const limited = new (store.constructor as typeof ObjectAgentHomeStore)({
      dataDir,
      storage: s3.storage,
      limits: { maxEntries: 1000, maxTotalBytes: 2 * 1024 * 1024 },
    });
    await putObject(store, objectKey(K, 2, 1), await seal(await make(), 2, "delta"));
    await rm(join(dataDir, "homes", K), { recursive: true, force: true });
    await rm(join(dataDir, "home-revisions"), { recursive: true, force: true });
    await writeTree(store.homeDir(K), { "keep.txt": "previous home" });
    const restore = limited.materialize({ homeKey: K, revision: 2, dataKey });
    expect(await errorCode(restore)).toBe(code);
    await expectUntouched();
    limited.client.destroy();
  });
});
