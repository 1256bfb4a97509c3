// CMP-1 through the API on the fake provider: every space has its Team Computer from the start,
// provisioned on first use; a bot's shell and files start in `bots/<bot-id>/`, bots share work
// through `shared/`; a Private Computer's bot has the whole workspace as its home.
import { computers } from "@rakazo/db";
import { listAgentFiles, readAgentFile, writeAgentFile } from "@rakazo/services";
import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestSystem, eventually, runningComputer, type TestSystem } from "../support/system.ts";

let system: TestSystem;
let tenant: Awaited<ReturnType<TestSystem["newTenant"]>>;
const caller = () => ({ userId: tenant.userId, tokenId: tenant.tokenId });

beforeAll(async () => {
  system = await createTestSystem();
  tenant = await system.newTenant("tina");
});
afterAll(() => system.close());

const ok = async (name: string, body: unknown) => {
  const res = await system.rpc(name, body, tenant.token);
  expect(res.status, `${name}: ${JSON.stringify(res.json)}`).toBe(200);
  return res.json.result;
};

/** A run's lease for the bot on the computer (what the agent's tools carry). */
const leaseFor = async (computerId: string, botId: string) => {
  const { lease } = await ok("run/start", { computerId, botId });
  return { computerId, botId, fencingToken: lease.fencingToken as number };
};

const pwd = async (computerId: string, lease?: { botId: string; fencingToken: number }) => {
  const wire = lease ? { lease: { botId: lease.botId, fencingToken: lease.fencingToken } } : {};
  const result = await ok("computer/exec", { computerId, argv: ["pwd"], ...wire });
  expect(result.exitCode).toBe(0);
  return (result.stdout as string).trim();
};

describe("the Team Computer (CMP-1)", () => {
  it("a new space lists its Team Computer first, unprovisioned until first use", async () => {
    const space = await ok("space/create", { name: "Lab" });
    const [team, ...rest] = await ok("computer/list", { spaceId: space.id });
    expect(rest).toEqual([]);
    expect(team).toMatchObject({ name: "Team Computer", mode: "team", state: "unprovisioned" });
    // Nothing runs for an idle space: no machine, no provisioning queued.
    await new Promise((done) => setTimeout(done, 300));
    expect((await ok("computer/get", { computerId: team.id })).state).toBe("unprovisioned");
    // Browsing its (empty) files needs no machine either.
    expect(await ok("computer/files/list", { computerId: team.id, path: "" })).toMatchObject({
      source: "stored",
      entries: [],
    });

    // Computers made by hand come after it; team ones before private ones, even a private one
    // older than every other (its creation time moved back here).
    const bot = await ok("bot/create", { spaceId: space.id, name: "Solo" });
    const older = await ok("computer/create", { spaceId: space.id, mode: "private", botId: bot.id });
    const extra = await ok("computer/create", { spaceId: space.id, name: "Extra" });
    await system.ctx.db
      .update(computers)
      .set({ createdAt: sql`now() - interval '1 hour'` })
      .where(eq(computers.id, older.id));
    const listed = await ok("computer/list", { spaceId: space.id });
    expect(listed.map((c: { id: string }) => c.id)).toEqual([team.id, extra.id, older.id]);
  });

  it("the bootstrap bundle's space has one, and the first exec provisions it", async () => {
    const [team] = await ok("computer/list", { spaceId: tenant.spaceId });
    expect(team).toMatchObject({ mode: "team", state: "unprovisioned" });
    await system.startWorker();
    const result = await ok("computer/exec", { computerId: team.id, argv: ["echo", "first use"] });
    expect(result).toMatchObject({ exitCode: 0, stdout: "first use\n" });
    expect((await ok("computer/get", { computerId: team.id })).state).toBe("running");
  });

  it("a bot's pwd is its own folder; two bots share a file through shared/", async () => {
    const [team] = await ok("computer/list", { spaceId: tenant.spaceId });
    const other = await ok("bot/create", { spaceId: tenant.spaceId, name: "Grace" });
    const ada = await leaseFor(team.id, tenant.botId);
    const grace = await leaseFor(team.id, other.id);

    const root = await pwd(team.id);
    expect(await pwd(team.id, ada)).toBe(`${root}/bots/${tenant.botId}`);
    expect(await pwd(team.id, grace)).toBe(`${root}/bots/${other.id}`);

    // Files tools start in the same folder.
    await writeAgentFile(system.ctx, caller(), { ...ada, path: "mine.txt", data: "ada's" });
    const adaFiles = await listAgentFiles(system.ctx, caller(), { ...ada, path: "" });
    expect(adaFiles.map((e) => e.path)).toEqual(["mine.txt"]);
    const atRoot = await ok("computer/files/list", { computerId: team.id, path: `bots/${tenant.botId}` });
    expect(atRoot.entries.map((e: { path: string }) => e.path)).toEqual([`bots/${tenant.botId}/mine.txt`]);

    // Shared work: written by one bot, read by the other, both by their own relative paths.
    await writeAgentFile(system.ctx, caller(), { ...ada, path: "../../shared/plan.md", data: "# plan" });
    const read = await readAgentFile(system.ctx, caller(), { ...grace, path: "../../shared/plan.md" });
    expect(Buffer.from(read).toString()).toBe("# plan");
    const shared = await listAgentFiles(system.ctx, caller(), { ...grace, path: "../../shared" });
    expect(shared.map((e) => e.path)).toEqual(["../../shared/plan.md"]);

    // A path may climb out of the bot's folder, never out of the workspace.
    await expect(
      readAgentFile(system.ctx, caller(), { ...grace, path: "../../../etc/passwd" }),
    ).rejects.toMatchObject({ code: "INVALID_PATH" });
    const escaped = await system.rpc(
      "computer/exec",
      {
        computerId: team.id,
        argv: ["pwd"],
        cwd: "../../..",
        lease: { botId: grace.botId, fencingToken: grace.fencingToken },
      },
      tenant.token,
    );
    expect(escaped.json.error.code).toBe("INVALID_PATH");
  });

  it("a Private Computer's bot sees its home as the workspace root", async () => {
    const computerId = await runningComputer(system, tenant, { mode: "private", botId: tenant.botId });
    const lease = await leaseFor(computerId, tenant.botId);
    expect(await pwd(computerId, lease)).toBe(await pwd(computerId));

    await writeAgentFile(system.ctx, caller(), { ...lease, path: "notes.txt", data: "private" });
    const files = await listAgentFiles(system.ctx, caller(), { ...lease, path: "" });
    expect(files.map((e) => e.path)).toEqual(["notes.txt"]);
    const listing = await ok("computer/files/list", { computerId, path: "" });
    expect(listing.entries.map((e: { path: string }) => e.path)).toEqual(["notes.txt"]);
  });

  it("deleting an unprovisioned Team Computer needs no machine", async () => {
    const space = await ok("space/create", { name: "Short-lived" });
    const [team] = await ok("computer/list", { spaceId: space.id });
    expect((await ok("computer/delete", { computerId: team.id })).state).toBe("deleting");
    await eventually(async () => {
      const res = await system.rpc("computer/get", { computerId: team.id }, tenant.token);
      return res.status === 404 ? true : undefined;
    });
  });
});
