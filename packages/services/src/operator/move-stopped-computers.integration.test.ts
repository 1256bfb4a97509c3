// Provider switch: `./rakazo computers --move-stopped` hands stopped computers on
// another kind to the current one, destroying their old machine through the old provider
// (PRV-3), and leaves running ones where they are. Real Postgres, real fake-provider machines.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { computers, newId } from "@rakazo/db";
import { createTestDatabase, type TestDatabase } from "@rakazo/db/testing";
import { silentLogger } from "@rakazo/log";
import { createFakeProvider } from "@rakazo/sandbox";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUserWithSpace } from "../identity/bootstrap.ts";
import { moveStoppedComputers } from "./move-stopped-computers.ts";

let database: TestDatabase;
let root: string;
beforeAll(async () => {
  database = await createTestDatabase();
  root = await mkdtemp(join(tmpdir(), "rakazo-move-"));
});
afterAll(async () => {
  await database.drop();
  await rm(root, { recursive: true, force: true });
});

describe("moveStoppedComputers", () => {
  it("moves stopped computers on another kind, destroying their old machine; running ones stay", async () => {
    const old = createFakeProvider({ rootDir: root });
    const { spaceId, computerId: teamComputerId } = await createUserWithSpace(database.db, {
      userName: "u",
      spaceName: "s",
      botName: "b",
      providerKind: "fake",
    });
    const row = async (state: "stopped" | "running", ref: string | null, providerKind = "fake") => {
      const id = newId("computer");
      await database.db.insert(computers).values({
        id,
        spaceId,
        name: id,
        mode: "team",
        providerKind,
        providerRef: ref,
        state,
        homeKey: id,
      });
      return id;
    };
    const stoppedId = newId("computer");
    const machine = await old.provision({ computerId: stoppedId, mode: "team", homeKey: stoppedId });
    await old.stop(machine.ref);
    const stopped = await database.db
      .insert(computers)
      .values({
        id: stoppedId,
        spaceId,
        name: "stopped",
        mode: "team",
        providerKind: "fake",
        providerRef: machine.ref,
        state: "stopped",
        homeKey: stoppedId,
      })
      .returning();
    expect(stopped).toHaveLength(1);
    const running = await row("running", "fake-running0");
    const alreadyHere = await row("stopped", null, "docker");

    const outcome = await moveStoppedComputers(
      { db: database.db, log: silentLogger },
      { toKind: "docker", providerOf: async (kind) => (kind === "fake" ? old : undefined) },
    );

    // The space's Team Computer was never provisioned: it has no machine and simply moves (CMP-1).
    expect(outcome.moved).toEqual(
      expect.arrayContaining([
        { id: stoppedId, from: "fake" },
        { id: teamComputerId, from: "fake" },
      ]),
    );
    expect(outcome.moved).toHaveLength(2);
    expect(outcome.running).toEqual([{ id: running, providerKind: "fake", state: "running" }]);
    expect(await old.status(machine.ref)).toBe("missing");
    const [moved] = await database.db.select().from(computers).where(eq(computers.id, stoppedId));
    expect(moved).toMatchObject({ providerKind: "docker", providerRef: null, state: "stopped" });
    const [left] = await database.db.select().from(computers).where(eq(computers.id, running));
    expect(left).toMatchObject({ providerKind: "fake", providerRef: "fake-running0", state: "running" });
    const [here] = await database.db.select().from(computers).where(eq(computers.id, alreadyHere));
    expect(here).toMatchObject({ providerKind: "docker" });
  });
});
