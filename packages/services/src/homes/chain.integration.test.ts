/**
 * Incremental checkpoints through the home verbs (Postgres, loopback S3, a provider that mounts
 * the home as Docker does): deltas on the row's revision, a restore of the chain on a fresh
 * host, the reconciler keeping exactly the chain, and deletion shredding every object.
 */
import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { computers, newId, spaces } from "@rakazo/db";
import { createTestDatabase, type TestDatabase } from "@rakazo/db/testing";
import { putRawObject, startTestS3Server, type TestS3Server } from "@rakazo/homes/testing";
import { createLogger } from "@rakazo/log";
import { createFakeProvider } from "@rakazo/sandbox";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ServiceContext } from "../context.ts";
import { LocalKeyWrapper, ObjectAgentHomeStore } from "./deps.ts";
import {
  checkpointComputerHome,
  destroyComputerHome,
  type HomesContext,
  prepareComputerHome,
  readStoredFile,
  reconcileHomeObjects,
} from "./index.ts";

let database: TestDatabase;
let s3: TestS3Server;
let root: string;
let ctx: HomesContext;

beforeAll(async () => {
  database = await createTestDatabase();
  s3 = await startTestS3Server();
  root = await mkdtemp(join(tmpdir(), "rakazo-chain-svc-"));
  ctx = {
    db: database.db,
    provider: createFakeProvider({ rootDir: join(root, "machines"), mountsHome: true }),
    log: createLogger({ level: "error", write: () => {} }),
    homes: new ObjectAgentHomeStore({ dataDir: join(root, "data"), storage: s3.storage }),
    keys: new LocalKeyWrapper(randomBytes(32)),
  } as Omit<ServiceContext, "jobs"> as ServiceContext;
});
afterAll(async () => {
  await database?.drop();
  await s3?.close();
  await rm(root, { recursive: true, force: true });
});

async function load(id: string) {
  const [row] = await database.db.select().from(computers).where(eq(computers.id, id));
  if (!row) throw new Error("missing computer");
  return row;
}

async function keys(homeKey: string): Promise<string[]> {
  const out: string[] = [];
  for await (const o of ctx.homes.listObjects()) if (o.homeKey === homeKey) out.push(o.key);
  return out.sort();
}

describe("incremental checkpoints through the home verbs", () => {
  it("saves deltas, restores the chain on a fresh host, reconciles to the chain, shreds on delete", async () => {
    const spaceId = newId("space");
    await database.db.insert(spaces).values({ id: spaceId, name: "s" });
    const id = newId("computer");
    const homeKey = id.replace(/^cmp_/, "home_");
    const machine = await ctx.provider.provision({ computerId: id, mode: "team", homeKey });
    const [inserted] = await database.db
      .insert(computers)
      .values({
        id,
        spaceId,
        name: "c",
        mode: "team",
        providerKind: ctx.provider.kind,
        providerRef: machine.ref,
        state: "running",
        homeKey,
      })
      .returning();
    if (!inserted) throw new Error("insert failed");
    const home = await prepareComputerHome(ctx, { computer: inserted });
    await mkdir(join(home, "notes"), { recursive: true });
    await writeFile(join(home, "big.bin"), randomBytes(512 * 1024));
    await writeFile(join(home, "notes/a.txt"), "one");
    await writeFile(join(home, "gone.txt"), "soon deleted");

    expect(await checkpointComputerHome(ctx, { computerId: id, reason: "test" })).toMatchObject({
      status: "saved",
      revision: 1,
    });
    await writeFile(join(home, "notes/a.txt"), "two");
    await checkpointComputerHome(ctx, { computerId: id, reason: "test" });
    await rm(join(home, "gone.txt"));
    await writeFile(join(home, "notes/b.txt"), "new");
    await checkpointComputerHome(ctx, { computerId: id, reason: "test" });
    const row = await load(id);
    expect(row.homeRevision).toBe(3);
    expect(await keys(homeKey)).toEqual([
      `homes/${homeKey}/1`,
      `homes/${homeKey}/2.d1`,
      `homes/${homeKey}/3.d1`,
    ]);

    // Leftovers: an object of an earlier chain, one older than the chain, one in flight.
    await putRawObject(s3.storage, `homes/${homeKey}/2.d0`, "x");
    await putRawObject(s3.storage, `homes/${homeKey}/0`, "x");
    await putRawObject(s3.storage, `homes/${homeKey}/4.d1`, "x");
    await reconcileHomeObjects(ctx);
    expect(await keys(homeKey)).toEqual([
      `homes/${homeKey}/1`,
      `homes/${homeKey}/2.d1`,
      `homes/${homeKey}/3.d1`,
      `homes/${homeKey}/4.d1`,
    ]);
    // Past the grace period the in-flight one goes too; the chain stays.
    await reconcileHomeObjects(ctx, { inFlightGraceMs: 0, now: new Date(Date.now() + 1000) });
    expect(await keys(homeKey)).toEqual([
      `homes/${homeKey}/1`,
      `homes/${homeKey}/2.d1`,
      `homes/${homeKey}/3.d1`,
    ]);

    // A fresh host (no cache) reads the chain: revision 3 exactly.
    await rm(join(root, "data"), { recursive: true, force: true });
    const read = async (path: string) =>
      (await readStoredFile(ctx, { computer: row, path }).catch((e: { code?: string }) => ({ text: e.code })))
        .text;
    expect(await read("notes/a.txt")).toBe("two");
    expect(await read("notes/b.txt")).toBe("new");
    expect(await read("gone.txt")).toBe("FILE_NOT_FOUND");

    await destroyComputerHome(ctx, row);
    expect((await load(id)).dataKeyWrapped).toBeNull();
    expect(await keys(homeKey)).toEqual([]);
  });
});
