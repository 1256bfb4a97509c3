// EXT-1..3 through the API on the fake provider: create-or-adopt by a caller-chosen
// key, several screens on one computer, exec and one text file, the service account seeing only
// its own computers, and destroy that is idempotent and leaves nothing (row, key, machine).
import { externalComputers } from "@rakazo/db";
import { screenBotId } from "@rakazo/services";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestSystem, eventually, runningComputer, type TestSystem } from "../support/system.ts";

const TOKEN = `ext_${"k".repeat(40)}`;
let system: TestSystem;
let tenant: Awaited<ReturnType<TestSystem["newTenant"]>>;

beforeAll(async () => {
  system = await createTestSystem({ externalToken: TOKEN });
  await system.startWorker();
  tenant = await system.newTenant("ursula");
}, 60_000);
afterAll(() => system?.close());

const ext = async (name: string, body: unknown) => {
  const res = await system.rpc(name, body, TOKEN);
  expect(res.status, `${name}: ${JSON.stringify(res.json)}`).toBe(200);
  return res.json.result;
};
const refused = async (name: string, body: unknown) => {
  const res = await system.rpc(name, body, TOKEN);
  expect(res.status, `${name}: ${JSON.stringify(res.json)}`).not.toBe(200);
  return res.json.error as { code: string };
};

/** Destroys and checks that nothing is left: state deleted, key released, machine gone. */
async function destroyCompletely(computerId: string): Promise<void> {
  const row = await system.ctx.db.query.computers.findFirst({ where: (c, { eq }) => eq(c.id, computerId) });
  const gone = await ext("external/computer/destroy", { computerId });
  expect(gone).toMatchObject({ computerId, destroyed: true, state: "deleted" });
  const after = await system.ctx.db.query.computers.findFirst({ where: (c, { eq }) => eq(c.id, computerId) });
  expect(after?.state).toBe("deleted");
  expect(
    await system.ctx.db.select().from(externalComputers).where(eq(externalComputers.computerId, computerId)),
  ).toEqual([]);
  // Every computer this suite destroys was running: it had a machine, and that machine is gone.
  const ref = row?.providerRef;
  if (!ref) throw new Error(`computer ${computerId} had no machine to check (state ${row?.state})`);
  expect(await system.provider.status(ref)).toBe("missing");
}

describe("the external computer surface (EXT-2)", () => {
  it("create-or-adopt: the same key returns the same computer, also from racing calls", async () => {
    const first = await ext("external/computer/create", { screen: "conversation-a" });
    expect(first.created).toBe(true);
    expect(first.computer).toMatchObject({ key: "conversation-a", state: "running" });
    expect(first.screen).toEqual({
      screen: "conversation-a",
      botId: screenBotId("conversation-a"),
      display: null,
    });
    const again = await ext("external/computer/create", { screen: "conversation-a" });
    expect(again).toMatchObject({ created: false, computer: { computerId: first.computer.computerId } });

    const racing = await Promise.all(
      [1, 2, 3, 4].map(() => ext("external/computer/create", { screen: "racer", wait: false })),
    );
    expect(new Set(racing.map((r) => r.computer.computerId)).size).toBe(1);
    expect(racing.filter((r) => r.created)).toHaveLength(1);
    // `wait: false` answered before the machine was made: destroy it once it runs, so the check
    // that destroying removes the machine has a machine to check.
    const racer = racing[0].computer.computerId;
    await eventually(async () => {
      const row = await system.ctx.db.query.computers.findFirst({ where: (c, { eq }) => eq(c.id, racer) });
      return row?.state === "running" ? true : undefined;
    }, 30_000);
    await destroyCompletely(racer);
    await destroyCompletely(first.computer.computerId);
  });

  it("screens named by any string share a computer by key, each with its own bot identity", async () => {
    const names = ["team/root · alice", "team/root · bob", "Ünïcode ✓ 3"];
    const made = [];
    for (const screen of names)
      made.push(await ext("external/computer/create", { screen, key: "team-root" }));
    expect(new Set(made.map((m) => m.computer.computerId)).size).toBe(1);
    expect(new Set(made.map((m) => m.screen.botId)).size).toBe(3);
    for (const m of made) expect(m.screen.botId).toMatch(/^bot_[a-z0-9]{20}$/);
    const listed = await ext("external/computer/list", {});
    expect(listed.map((c: { key: string }) => c.key)).toContain("team-root");
    await destroyCompletely(made[0].computer.computerId);
  });

  it("exec runs one argv; a text file is written and read back; paths stay in the workspace", async () => {
    const { computer } = await ext("external/computer/create", { screen: "files" });
    const { computerId } = computer;
    const echo = await ext("external/computer/exec", {
      computerId,
      argv: ["echo", "argv-ok"],
    });
    expect(echo).toMatchObject({ exitCode: 0, stdout: "argv-ok\n", timedOut: false });
    expect(await ext("external/file/write", { computerId, path: "notes/a.txt", content: "héllo\n" })).toEqual(
      {
        path: "notes/a.txt",
        bytes: 7,
      },
    );
    expect(await ext("external/file/read", { computerId, path: "notes/a.txt" })).toEqual({
      path: "notes/a.txt",
      content: "héllo\n",
      bytes: 7,
    });
    expect((await refused("external/file/read", { computerId, path: "../../etc/passwd" })).code).toBe(
      "INVALID_PATH",
    );
    expect((await refused("external/file/read", { computerId, path: "missing.txt" })).code).toBe(
      "FILE_NOT_FOUND",
    );
    await destroyCompletely(computerId);
  });

  it("a user's computer does not exist for the service account, nor the account's for the user", async () => {
    const userComputer = await runningComputer(system, tenant);
    for (const name of ["external/computer/state", "external/computer/exec", "external/file/read"]) {
      const body = { computerId: userComputer, argv: ["true"], path: "x" };
      const input = Object.fromEntries(
        Object.entries(body).filter(
          ([k]) =>
            k === "computerId" ||
            (name.endsWith("exec") ? k === "argv" : name.endsWith("read") && k === "path"),
        ),
      );
      expect((await refused(name, input)).code, name).toBe("NOT_FOUND");
    }
    // Destroying it through the external surface is a no-op that says so; the computer lives on.
    expect(await ext("external/computer/destroy", { computerId: userComputer })).toEqual({
      computerId: userComputer,
      destroyed: false,
      state: "unknown",
    });
    const own = await system.rpc("computer/get", { computerId: userComputer }, tenant.token);
    expect(own.json.result.state).toBe("running");

    const { computer } = await ext("external/computer/create", { screen: "private-to-service" });
    const asUser = await system.rpc("computer/get", { computerId: computer.computerId }, tenant.token);
    expect(asUser.json.error.code).toBe("NOT_FOUND");
    await destroyCompletely(computer.computerId);
  });

  it("destroy is idempotent; the key then names a new computer", async () => {
    const { computer } = await ext("external/computer/create", { screen: "short-lived" });
    await destroyCompletely(computer.computerId);
    expect(await ext("external/computer/destroy", { computerId: computer.computerId })).toEqual({
      computerId: computer.computerId,
      destroyed: false,
      state: "deleted",
    });
    const unknown = `cmp_${"q".repeat(20)}`;
    expect(await ext("external/computer/destroy", { computerId: unknown })).toMatchObject({
      destroyed: false,
    });
    expect(
      (await refused("external/computer/exec", { computerId: computer.computerId, argv: ["true"] })).code,
    ).toBe("NOT_FOUND");
    const listed = await ext("external/computer/list", {});
    expect(listed.map((c: { computerId: string }) => c.computerId)).not.toContain(computer.computerId);
    const next = await ext("external/computer/create", { screen: "short-lived" });
    expect(next.created).toBe(true);
    expect(next.computer.computerId).not.toBe(computer.computerId);
    await destroyCompletely(next.computer.computerId);
  });
});
