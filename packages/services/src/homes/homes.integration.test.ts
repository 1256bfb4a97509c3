import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { computers, newId, spaces } from "@rakazo/db";
import { createTestDatabase, type TestDatabase } from "@rakazo/db/testing";
import { putRawObject, startTestS3Server, type TestS3Server } from "@rakazo/homes/testing";
import { createFakeProvider } from "@rakazo/sandbox";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ServiceContext } from "../context.ts";
import { checkpointUnlessInUse } from "./after-runs.ts";
import { isHomeStoreError, LocalKeyWrapper, ObjectAgentHomeStore } from "./deps.ts";
import {
  checkpointComputerHome,
  destroyComputerHome,
  type HomesContext,
  listStoredFiles,
  readStoredFile,
  reconcileHomeObjects,
  restoreComputerHome,
} from "./index.ts";

let database: TestDatabase;
let s3: TestS3Server;
let root: string;
let ctx: HomesContext;

const silent = {
  info() {},
  warn() {},
  error() {},
  debug() {},
  child() {
    return silent;
  },
};

beforeAll(async () => {
  database = await createTestDatabase();
  s3 = await startTestS3Server();
  root = await mkdtemp(join(tmpdir(), "rakazo-homes-svc-"));
  const base = {
    db: database.db,
    jobs: undefined,
    provider: createFakeProvider({ rootDir: join(root, "machines") }),
    log: silent,
  } as unknown as ServiceContext;
  ctx = {
    ...base,
    homes: new ObjectAgentHomeStore({ dataDir: join(root, "data"), storage: s3.storage }),
    keys: new LocalKeyWrapper(randomBytes(32)),
  };
});
afterAll(async () => {
  await database?.drop();
  await s3?.close();
  await rm(root, { recursive: true, force: true });
});

async function newComputer() {
  const spaceId = newId("space");
  await database.db.insert(spaces).values({ id: spaceId, name: "s" });
  const id = newId("computer");
  const homeKey = id.replace(/^cmp_/, "home_");
  const machine = await ctx.provider.provision({ computerId: id, mode: "team", homeKey });
  await database.db.insert(computers).values({
    id,
    spaceId,
    name: "c",
    mode: "team",
    providerKind: "fake",
    providerRef: machine.ref,
    state: "running",
    homeKey,
  });
  return { id, ref: machine.ref };
}

async function load(id: string) {
  const [row] = await database.db.select().from(computers).where(eq(computers.id, id));
  if (!row) throw new Error("missing computer");
  return row;
}

describe("home verbs with Postgres and a loopback bucket", () => {
  it("checkpoint → replace the machine → restore; stored files readable while stopped; destroy shreds", async () => {
    const { id, ref } = await newComputer();
    const files = ctx.provider.sandbox(ref).files;
    await files.write("notes/a.txt", "hello from revision one");
    await files.write(".browser-profiles/bot_1/Default/Cookies", "cookie-jar");
    let quiesced = 0;
    const saved = await checkpointComputerHome(ctx, {
      computerId: id,
      reason: "test",
      quiesce: async () => {
        quiesced += 1;
      },
    });
    expect(saved).toMatchObject({ status: "saved", revision: 1 });
    expect(quiesced).toBe(1);
    let row = await load(id);
    expect(row.homeRevision).toBe(1);
    expect(row.dataKeyWrapped).toMatch(/^v1\./);
    expect(await checkpointComputerHome(ctx, { computerId: id, reason: "again" })).toMatchObject({
      status: "unchanged",
      revision: 1,
    });

    // FIL-1 on the stored workspace, machine stopped.
    await ctx.provider.stop(ref);
    const listing = await listStoredFiles(ctx, { computer: row, path: "notes" });
    expect(listing.entries.map((e) => e.name)).toEqual(["a.txt"]);
    expect((await readStoredFile(ctx, { computer: row, path: "notes/a.txt" })).text).toBe(
      "hello from revision one",
    );
    await expect(readStoredFile(ctx, { computer: row, path: "../etc/passwd" })).rejects.toMatchObject({
      code: "INVALID_PATH",
    });

    // The machine is lost; a replacement imports the stored workspace.
    await ctx.provider.destroy(ref);
    const replacement = await ctx.provider.provision({ computerId: id, mode: "team", homeKey: row.homeKey });
    await rm(join(root, "data"), { recursive: true, force: true });
    const sandbox = ctx.provider.sandbox(replacement.ref);
    expect(await restoreComputerHome(ctx, { computer: row, sandbox })).toMatchObject({ status: "imported" });
    expect(Buffer.from(await sandbox.files.read("notes/a.txt")).toString()).toBe("hello from revision one");
    expect(Buffer.from(await sandbox.files.read(".browser-profiles/bot_1/Default/Cookies")).toString()).toBe(
      "cookie-jar",
    );

    // Deleting the computer: key shredded, objects gone, nothing readable.
    await destroyComputerHome(ctx, row);
    row = await load(id);
    expect(row.dataKeyWrapped).toBeNull();
    const error = await restoreComputerHome(ctx, { computer: row, sandbox }).catch((e: unknown) => e);
    expect(isHomeStoreError(error, "KEY_UNAVAILABLE")).toBe(true);
    for await (const object of ctx.homes.listObjects()) expect(object.homeKey).not.toBe(row.homeKey);
  });

  it("a run-end checkpoint closes only the browsers: each desktop, its slot and its screen stay (CMP-6)", async () => {
    const { id, ref } = await newComputer();
    const desktop = ctx.provider.sandbox(ref).desktop;
    if (!desktop) throw new Error("the fake has desktops");
    await desktop.act("bot_1", [{ type: "type", text: "signed in" }]);
    const before = await desktop.observe("bot_1");
    await ctx.provider.sandbox(ref).files.write("notes/run.txt", "what the run wrote");
    expect(
      await checkpointUnlessInUse(ctx as ServiceContext, { computerId: id, reason: "run_succeeded" }),
    ).toBe("saved");
    // A released desktop would come back as a new generation with an empty screen.
    const after = await desktop.observe("bot_1");
    expect(after.slot).toEqual(before.slot);
    expect(after.frameHash).toBe(before.frameHash);
    expect((await desktop.list()).map((slot) => slot.botId)).toEqual(["bot_1"]);
  });

  it("a run-end checkpoint releases a desktop whose browser cannot be closed alone (an older supervisor)", async () => {
    const { id, ref } = await newComputer();
    const fake = ctx.provider;
    const older = {
      ...ctx,
      provider: {
        ...fake,
        sandbox: (machine: string) => {
          const sandbox = fake.sandbox(machine);
          if (!sandbox.desktop) throw new Error("the fake has desktops");
          const closeBrowser = async () => {
            throw new Error('unknown method "desktop.closeBrowser"');
          };
          return { ...sandbox, desktop: { ...sandbox.desktop, closeBrowser } };
        },
      },
    } as ServiceContext;
    const before = await fake.sandbox(ref).desktop?.observe("bot_1");
    await fake.sandbox(ref).files.write("notes/run.txt", "what the run wrote");
    expect(await checkpointUnlessInUse(older, { computerId: id, reason: "run_succeeded" })).toBe("saved");
    // Released for the save (the old path), and back after it as the next generation.
    const slots = await fake.sandbox(ref).desktop?.list();
    expect(slots?.map((slot) => [slot.botId, slot.slot.generation])).toEqual([
      ["bot_1", (before?.slot.generation ?? 0) + 1],
    ]);
  });

  it("a wrong master key fails clearly", async () => {
    const { id, ref } = await newComputer();
    await ctx.provider.sandbox(ref).files.write("x.txt", "x");
    await checkpointComputerHome(ctx, { computerId: id, reason: "test" });
    const other: HomesContext = { ...ctx, keys: new LocalKeyWrapper(randomBytes(32)) };
    const error = await restoreComputerHome(other, {
      computer: await load(id),
      sandbox: ctx.provider.sandbox(ref),
    }).catch((e: unknown) => e);
    expect(isHomeStoreError(error, "KEY_UNWRAP_FAILED")).toBe(true);
    expect((error as Error).message).toMatch(/wrong master key/);
  });

  it("the reconciler deletes objects no computer owns and keeps the current ones", async () => {
    const { id, ref } = await newComputer();
    await ctx.provider.sandbox(ref).files.write("x.txt", "x");
    await checkpointComputerHome(ctx, { computerId: id, reason: "test" });
    const row = await load(id);
    const put = (key: string) => putRawObject(s3.storage, key, "x");
    await put("homes/home_nobody/3"); // no computer
    await put(`homes/${row.homeKey}/0`); // older than the row
    await put(`homes/${row.homeKey}/${row.homeRevision + 1}`); // in flight: kept within the grace period
    const result = await reconcileHomeObjects(ctx);
    expect(result.deleted).toBeGreaterThanOrEqual(2);
    const left: string[] = [];
    for await (const o of ctx.homes.listObjects()) left.push(o.key);
    expect(left).toContain(`homes/${row.homeKey}/${row.homeRevision}`);
    expect(left).toContain(`homes/${row.homeKey}/${row.homeRevision + 1}`);
    expect(left).not.toContain("homes/home_nobody/3");
    expect(left).not.toContain(`homes/${row.homeKey}/0`);
  });
});
