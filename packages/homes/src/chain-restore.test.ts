// A fresh host's restore of a chain downloads its deltas a few at a time beside the base, and
// still restores them in order; a missing delta still fails it with nothing left behind.
import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DeleteObjectCommand } from "@aws-sdk/client-s3";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { ObjectAgentHomeStore } from "./object-store.ts";
import { objectKey } from "./object-store.ts";
import { chainRow, chainStore, checkpointHome, errorCode } from "./testing/chain-fixtures.ts";
import { startTestS3Server, type TestS3Server } from "./testing/s3-server.ts";

let s3: TestS3Server;
let root: string;
let dataDir: string;
const dataKey = randomBytes(32);
const DELTAS = 9;

beforeAll(async () => {
  s3 = await startTestS3Server();
});
afterAll(async () => {
  await s3.close();
});
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "rakazo-chain-restore-"));
  dataDir = join(root, "data");
  return async () => {
    await rm(root, { recursive: true, force: true });
  };
});

/** A base and DELTAS deltas, each writing its revision into `counter.txt` and a file of its own. */
async function chainOf(homeKey: string): Promise<ObjectAgentHomeStore> {
  const store = chainStore(s3, dataDir);
  const home = store.homeDir(homeKey);
  await mkdir(home, { recursive: true });
  await writeFile(join(home, "base.bin"), randomBytes(256 * 1024));
  const row = chainRow();
  for (let revision = 1; revision <= DELTAS + 1; revision += 1) {
    await writeFile(join(home, "counter.txt"), String(revision));
    await writeFile(join(home, `r${revision}.txt`), `revision ${revision}`);
    expect((await checkpointHome(store, homeKey, dataKey, row)).status).toBe("saved");
  }
  await rm(join(dataDir, "homes", homeKey), { recursive: true, force: true });
  await rm(join(dataDir, "home-revisions"), { recursive: true, force: true });
  return store;
}

/** Counts the store's GetObject requests in flight (sent, not yet answered). */
function countGets(store: ObjectAgentHomeStore): { max: number; total: number } {
  const seen = { max: 0, total: 0 };
  let inFlight = 0;
  store.client.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName !== "GetObjectCommand") return next(args);
      inFlight += 1;
      seen.total += 1;
      seen.max = Math.max(seen.max, inFlight);
      try {
        return await next(args);
      } finally {
        inFlight -= 1;
      }
    },
    { step: "initialize", name: "countGets" },
  );
  return seen;
}

describe("a chain's restore on a fresh host", () => {
  it("downloads the deltas a few at a time beside the base, and applies them in order", async () => {
    const fresh = await chainOf("home_p");
    const restorer = chainStore(s3, dataDir);
    const gets = countGets(restorer);
    const dir = await restorer.materialize({ homeKey: "home_p", dataKey, revision: DELTAS + 1 });
    expect(await readFile(join(dir, "counter.txt"), "utf8")).toBe(String(DELTAS + 1));
    for (let revision = 1; revision <= DELTAS + 1; revision += 1) {
      expect(await readFile(join(dir, `r${revision}.txt`), "utf8")).toBe(`revision ${revision}`);
    }
    expect(gets.total).toBe(DELTAS + 1);
    // The tip alone first; then the base and up to four deltas at once.
    expect(gets.max).toBeGreaterThan(1);
    expect(gets.max).toBeLessThanOrEqual(5);
    fresh.client.destroy();
    restorer.client.destroy();
  });

  it("a missing delta fails it with a code, leaving no home and no work folder", async () => {
    const store = await chainOf("home_m");
    await store.client.send(
      new DeleteObjectCommand({ Bucket: store.bucket, Key: objectKey("home_m", 4, 1) }),
    );
    const code = await errorCode(store.materialize({ homeKey: "home_m", dataKey, revision: DELTAS + 1 }));
    expect(code).toBe("CHECKPOINT_NOT_FOUND");
    const left = await readdir(join(dataDir, "homes")).catch(() => [] as string[]);
    expect(left).toEqual([]);
    store.client.destroy();
  });
});
