import { randomBytes } from "node:crypto";
import { chmod, mkdir, mkdtemp, open, rm, unlink, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { objectKey } from "./object-store.ts";
import {
  chainRow,
  chainStore,
  checkpointHome,
  errorCode,
  getObject,
  keysOf,
  modesOf,
  putObject,
  storedTree,
} from "./testing/chain-fixtures.ts";
import { sampleWorkspace, writeTree } from "./testing/fixtures.ts";
import { startTestS3Server, type TestS3Server } from "./testing/s3-server.ts";

let s3: TestS3Server;
let root: string;
let dataDir: string;
const dataKey = randomBytes(32);
const MiB = 1024 * 1024;

beforeAll(async () => {
  s3 = await startTestS3Server();
});
afterAll(async () => {
  await s3.close();
});
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "rakazo-chain-"));
  dataDir = join(root, "data");
  return async () => {
    await rm(root, { recursive: true, force: true });
  };
});

/** Forgets the cache (another host): the next materialize downloads the chain. */
async function freshHost(homeKey: string): Promise<void> {
  await rm(join(dataDir, "homes", homeKey), { recursive: true, force: true });
  await rm(join(dataDir, "home-revisions"), { recursive: true, force: true });
}

describe("incremental checkpoints (object store)", () => {
  it("a change uploads only what changed; a fresh host restores base + deltas exactly", async () => {
    const store = chainStore(s3, dataDir);
    const home = store.homeDir("home_c");
    await writeTree(home, { ...sampleWorkspace(), "big/base.bin": randomBytes(4 * MiB), "old/x.txt": "x" });
    await mkdir(join(home, "empty-before"));
    const r = chainRow();
    expect((await checkpointHome(store, "home_c", dataKey, r)).status).toBe("saved");
    const baseSize = (await getObject(store, objectKey("home_c", 1))).length;

    // Revision 2: a changed file, a new file, a new empty folder, a changed mode.
    await writeFile(join(home, "notes/todo.md"), "# todo\n- done\n");
    await writeFile(join(home, "new.txt"), "new");
    await mkdir(join(home, "empty-after/deeper"), { recursive: true });
    await chmod(join(home, "bots/bot_1/data.bin"), 0o600);
    await checkpointHome(store, "home_c", dataKey, r);
    // Revision 3: deletions (a file, a folder with content), a file replaced by a folder and
    // back the other way.
    await unlink(join(home, "new.txt"));
    await rm(join(home, "old"), { recursive: true });
    await unlink(join(home, "shared/empty.txt"));
    await mkdir(join(home, "shared/empty.txt"));
    await writeFile(join(home, "shared/empty.txt/inside"), "now a folder");
    await rm(join(home, "empty-before"), { recursive: true });
    await writeFile(join(home, "empty-before"), "now a file");
    expect(await checkpointHome(store, "home_c", dataKey, r)).toMatchObject({ status: "saved", revision: 3 });

    expect(await keysOf(store, "home_c")).toEqual([
      objectKey("home_c", 1),
      objectKey("home_c", 2, 1),
      objectKey("home_c", 3, 1),
    ]);
    const delta = await getObject(store, objectKey("home_c", 2, 1));
    expect(delta.length).toBeLessThan(baseSize / 8);
    expect(delta.length).toBeLessThan(400 * 1024); // the changed 300 KiB data.bin, not the 4 MiB file

    const expected = await storedTree(home);
    const modes = await modesOf(home);
    await freshHost("home_c");
    const dir = await store.materialize({ homeKey: "home_c", revision: 3, dataKey });
    expect(await storedTree(dir)).toEqual(expected);
    expect(await modesOf(dir)).toEqual(modes);
    expect(expected["empty-after/deeper/"]).toBe("dir");
    expect(expected["old/x.txt"]).toBeUndefined();

    // The restored host carries the chain on: the next change is a delta again.
    await writeFile(join(dir, "notes/todo.md"), "after restore");
    await checkpointHome(store, "home_c", dataKey, r);
    expect(await keysOf(store, "home_c")).toContain(objectKey("home_c", 4, 1));
    const atFour = await storedTree(dir);
    expect(atFour["notes/todo.md"]).not.toBe(expected["notes/todo.md"]);
    await freshHost("home_c");
    const again = await store.materialize({ homeKey: "home_c", revision: 4, dataKey });
    expect(await storedTree(again)).toEqual(atFour);
  });

  it("a file rewritten in place with its old size and mtime is still carried (ctime)", async () => {
    const store = chainStore(s3, dataDir);
    const home = store.homeDir("home_i");
    await writeTree(home, { "a.bin": randomBytes(64 * 1024), "b.txt": "same-size-1" });
    // Whole seconds, so setting the mtime back restores it to the nanosecond.
    await utimes(join(home, "b.txt"), 1_000_000, 1_000_000);
    const r = chainRow();
    await checkpointHome(store, "home_i", dataKey, r);
    const handle = await open(join(home, "b.txt"), "r+");
    await handle.write("same-size-2", 0);
    await handle.close();
    await utimes(join(home, "b.txt"), 1_000_000, 1_000_000);
    expect((await checkpointHome(store, "home_i", dataKey, r)).status).toBe("saved");
    const expected = await storedTree(home);
    await freshHost("home_i");
    expect(await storedTree(await store.materialize({ homeKey: "home_i", revision: 2, dataKey }))).toEqual(
      expected,
    );
  });

  it("compacts after maxDeltas deltas and retires the previous chain at the new base", async () => {
    const store = chainStore(s3, dataDir, { maxDeltas: 2, maxDeltaRatio: 1 });
    const home = store.homeDir("home_m");
    await writeTree(home, { "a.bin": randomBytes(64 * 1024), "b.txt": "0" });
    const r = chainRow();
    for (let i = 0; i < 4; i += 1) {
      if (i > 0) await writeFile(join(home, "b.txt"), String(i));
      await checkpointHome(store, "home_m", dataKey, r);
    }
    // 1 base, 2, 3 deltas, 4 a new base: 1..3 deleted once 4 committed.
    expect(await keysOf(store, "home_m")).toEqual([objectKey("home_m", 4)]);
    await writeFile(join(home, "b.txt"), "4");
    await checkpointHome(store, "home_m", dataKey, r);
    expect(await keysOf(store, "home_m")).toEqual([objectKey("home_m", 4), objectKey("home_m", 5, 4)]);
  });

  it("compacts once the deltas together carry more than maxDeltaRatio of the base", async () => {
    const store = chainStore(s3, dataDir, { maxDeltas: 20, maxDeltaRatio: 0.25 });
    const home = store.homeDir("home_q");
    await writeTree(home, { "a.bin": randomBytes(400 * 1024), "b.bin": randomBytes(60 * 1024) });
    const r = chainRow();
    await checkpointHome(store, "home_q", dataKey, r);
    await writeFile(join(home, "b.bin"), randomBytes(60 * 1024)); // 60 KiB ≤ 25 % of 460 KiB
    await checkpointHome(store, "home_q", dataKey, r);
    expect(await keysOf(store, "home_q")).toEqual([objectKey("home_q", 1), objectKey("home_q", 2, 1)]);
    await writeFile(join(home, "b.bin"), randomBytes(60 * 1024)); // 120 KiB > 115 KiB
    await checkpointHome(store, "home_q", dataKey, r);
    expect(await keysOf(store, "home_q")).toEqual([objectKey("home_q", 3)]);
  });

  it("maxDeltas 0 keeps the full format: every checkpoint a base, latest-only", async () => {
    const store = chainStore(s3, dataDir, { maxDeltas: 0, maxDeltaRatio: 1 });
    await writeTree(store.homeDir("home_f"), { "a.txt": "1" });
    const r = chainRow();
    await checkpointHome(store, "home_f", dataKey, r);
    await writeFile(join(store.homeDir("home_f"), "a.txt"), "2");
    await checkpointHome(store, "home_f", dataKey, r);
    expect(await keysOf(store, "home_f")).toEqual([objectKey("home_f", 2)]);
  });

  it("a torn delta upload never becomes the latest revision; a leftover of it is replaced", async () => {
    const store = chainStore(s3, dataDir);
    const home = store.homeDir("home_x");
    await writeTree(home, { "a.bin": randomBytes(200 * 1024), "b.txt": "one" });
    const r = chainRow();
    await checkpointHome(store, "home_x", dataKey, r);
    const atOne = await storedTree(home);
    await writeFile(join(home, "b.txt"), "two");
    // The upload of the delta breaks off mid-way.
    store.client.middlewareStack.add(
      (next) => async (args) => {
        const input = args.input as { Key?: string };
        if (input.Key === objectKey("home_x", 2, 1)) throw new Error("connection reset");
        return next(args);
      },
      { step: "initialize", name: "tear" },
    );
    expect(await errorCode(checkpointHome(store, "home_x", dataKey, r))).toBe("STORAGE_ERROR");
    store.client.middlewareStack.remove("tear");
    expect(r.state.revision).toBe(1);
    // …and an earlier crashed attempt left a whole object at revision 2 behind.
    await putObject(store, objectKey("home_x", 2), Buffer.from("leftover"));
    await freshHost("home_x");
    expect(await storedTree(await store.materialize({ homeKey: "home_x", revision: 1, dataKey }))).toEqual(
      atOne,
    );
    await writeFile(join(home, "b.txt"), "two");
    await checkpointHome(store, "home_x", dataKey, r); // the delta replaces the leftover
    await writeFile(join(home, "b.txt"), "three");
    await checkpointHome(store, "home_x", dataKey, r);
    expect(await keysOf(store, "home_x")).toEqual([
      objectKey("home_x", 1),
      objectKey("home_x", 2, 1),
      objectKey("home_x", 3, 1),
    ]);
    const expected = await storedTree(home);
    await freshHost("home_x");
    expect(await storedTree(await store.materialize({ homeKey: "home_x", revision: 3, dataKey }))).toEqual(
      expected,
    );
  });

  it("destroy removes every object of the chain", async () => {
    const store = chainStore(s3, dataDir);
    await writeTree(store.homeDir("home_z"), { "a.bin": randomBytes(100 * 1024), "b.txt": "1" });
    const r = chainRow();
    await checkpointHome(store, "home_z", dataKey, r);
    await writeFile(join(store.homeDir("home_z"), "b.txt"), "2");
    await checkpointHome(store, "home_z", dataKey, r);
    expect((await keysOf(store, "home_z")).length).toBe(2);
    await store.destroy("home_z");
    expect(await keysOf(store, "home_z")).toEqual([]);
  });
});
