/**
 * Provider differences are capabilities the adapter declares, not kind checks: the
 * same fake provider, declaring `mountsHome`, makes checkpoints read the local home in place and
 * restores leave the mounted home alone; and `defaultPageBrowser` decides the page browser.
 */
import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { computers, newId, spaces } from "@rakazo/db";
import { createTestDatabase, type TestDatabase } from "@rakazo/db/testing";
import { createLogger } from "@rakazo/log";
import { createFakeProvider, type SandboxProvider } from "@rakazo/sandbox";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultBrowserMode } from "../agent/page.ts";
import type { ServiceContext } from "../context.ts";
import { LocalAgentHomeStore, LocalKeyWrapper } from "./deps.ts";
import {
  checkpointComputerHome,
  listStoredFiles,
  prepareComputerHome,
  restoreComputerHome,
} from "./index.ts";

let database: TestDatabase;
let root: string;

beforeAll(async () => {
  database = await createTestDatabase();
  root = await mkdtemp(join(tmpdir(), "rakazo-mounts-"));
});
afterAll(async () => {
  await database?.drop();
  await rm(root, { recursive: true, force: true });
});

function contextWith(provider: SandboxProvider, name: string): ServiceContext {
  // Only what the home verbs touch: no jobs are sent here.
  return {
    db: database.db,
    provider,
    log: createLogger({ level: "error", write: () => {} }),
    homes: new LocalAgentHomeStore({ dataDir: join(root, name, "data") }),
    keys: new LocalKeyWrapper(randomBytes(32)),
  } as Omit<ServiceContext, "jobs"> as ServiceContext;
}

/** A running computer whose machine holds `machine.txt` and whose local home holds `home.txt`. */
async function computerWithTwoCopies(ctx: ServiceContext) {
  const spaceId = newId("space");
  await database.db.insert(spaces).values({ id: spaceId, name: "s" });
  const id = newId("computer");
  const homeKey = id.replace(/^cmp_/, "home_");
  const machine = await ctx.provider.provision({ computerId: id, mode: "team", homeKey });
  await ctx.provider.sandbox(machine.ref).files.write("machine.txt", new TextEncoder().encode("machine"));
  const [row] = await database.db
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
  if (!row) throw new Error("insert failed");
  const home = await prepareComputerHome(ctx, { computer: row });
  await mkdir(home, { recursive: true });
  await writeFile(join(home, "home.txt"), "home");
  return { id, ref: machine.ref };
}

async function storedNames(ctx: ServiceContext, id: string): Promise<string[]> {
  const [row] = await database.db.select().from(computers).where(eq(computers.id, id));
  if (!row) throw new Error("gone");
  const listed = await listStoredFiles(ctx, { computer: row, path: "" });
  return listed.entries.map((e) => e.name).sort();
}

describe("capabilities.mountsHome decides where a workspace is read and restored", () => {
  it("a provider that mounts homes: the checkpoint reads the local home; restore leaves it mounted", async () => {
    const ctx = contextWith(createFakeProvider({ rootDir: join(root, "m1"), mountsHome: true }), "m1");
    const { id, ref } = await computerWithTwoCopies(ctx);
    expect((await checkpointComputerHome(ctx, { computerId: id, reason: "test" })).status).toBe("saved");
    expect(await storedNames(ctx, id)).toEqual(["home.txt"]);
    const [row] = await database.db.select().from(computers).where(eq(computers.id, id));
    if (!row) throw new Error("gone");
    const restored = await restoreComputerHome(ctx, { computer: row, sandbox: ctx.provider.sandbox(ref) });
    expect(restored.status).toBe("mounted");
  });

  it("a provider that does not: the checkpoint exports the machine's workspace", async () => {
    const ctx = contextWith(createFakeProvider({ rootDir: join(root, "m2") }), "m2");
    const { id } = await computerWithTwoCopies(ctx);
    expect((await checkpointComputerHome(ctx, { computerId: id, reason: "test" })).status).toBe("saved");
    expect(await storedNames(ctx, id)).toEqual(["machine.txt"]);
  });
});

describe("capabilities.defaultPageBrowser", () => {
  it("decides the page browser when none is asked for, whatever the kind", () => {
    const fake = createFakeProvider({ rootDir: join(root, "p") });
    expect(defaultBrowserMode({ provider: fake })).toBe("fake");
    const sandboxed = {
      ...fake,
      capabilities: { ...fake.capabilities, defaultPageBrowser: "sandbox" as const },
    };
    expect(defaultBrowserMode({ provider: sandboxed })).toBe("sandbox");
  });
});
