// TKO-1/TKO-2 as a table: each row sets up a situation and expects one answer.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestSystem, runningComputer, type TestSystem } from "../support/system.ts";

let system: TestSystem;
let owner: Awaited<ReturnType<TestSystem["newTenant"]>>;
let secondUserToken: string;
let computerId: string;

beforeAll(async () => {
  system = await createTestSystem();
  await system.startWorker();
  owner = await system.newTenant("fay");
  computerId = await runningComputer(system, owner);
  // A second member of the same space.
  const second = await system.newTenant("gus");
  await system.ctx.db.execute(
    (await import("drizzle-orm"))
      .sql`insert into space_members (space_id, user_id, role) values (${owner.spaceId}, ${second.userId}, 'member')`,
  );
  secondUserToken = second.token;
});
afterAll(() => system.close());

async function newBot(name: string): Promise<string> {
  return (await system.rpc("bot/create", { spaceId: owner.spaceId, name }, owner.token)).json.result.id;
}
const take = (botId: string, token = owner.token) =>
  system.rpc("computer/takeControl", { computerId, botId }, token);
const startRun = async (botId: string) =>
  (await system.rpc("run/start", { computerId, botId }, owner.token)).json.result as {
    run: { id: string };
    lease: { fencingToken: number };
  };

describe("takeover matrix", () => {
  const matrix: [string, (botId: string) => Promise<void>, number, string | null][] = [
    ["no run: granted", async () => {}, 200, null],
    [
      "active run: 409 Stop the bot first",
      async (botId) => {
        await startRun(botId);
      },
      409,
      "Stop the bot first",
    ],
    [
      "waiting_takeover: granted",
      async (botId) => {
        const { run, lease } = await startRun(botId);
        const res = await system.rpc(
          "run/requestTakeover",
          { runId: run.id, fencingToken: lease.fencingToken, reason: "2FA code needed" },
          owner.token,
        );
        expect(res.json.result.status).toBe("waiting_takeover");
      },
      200,
      null,
    ],
    [
      "after stopBot: granted",
      async (botId) => {
        await startRun(botId);
        const stopped = await system.rpc("computer/stopBot", { computerId, botId }, owner.token);
        expect(stopped.json.result.canceledRunId).toMatch(/^run_/);
      },
      200,
      null,
    ],
    [
      "second user while one holds control: refused",
      async (botId) => {
        expect((await take(botId)).status).toBe(200);
      },
      409,
      "another person is controlling this screen",
    ],
  ];

  it.each(matrix)("%s", async (name, arrange, status, message) => {
    const botId = await newBot(name.slice(0, 20));
    await arrange(botId);
    const res = await take(botId, name.startsWith("second user") ? secondUserToken : owner.token);
    expect(res.status).toBe(status);
    if (message) expect(res.json.error.message).toBe(message);
    else expect(res.json.result.fencingToken).toBeGreaterThan(0);
  });

  it("release → the waiting run continues and the agent may act again", async () => {
    const botId = await newBot("resume");
    const { run, lease } = await startRun(botId);
    await system.rpc(
      "run/requestTakeover",
      { runId: run.id, fencingToken: lease.fencingToken, reason: "login" },
      owner.token,
    );
    expect((await take(botId)).status).toBe(200);
    const released = await system.rpc("computer/releaseControl", { computerId, botId }, owner.token);
    expect(released.json.result).toEqual({ released: true, resumedRunId: run.id });
    expect((await system.rpc("run/get", { runId: run.id }, owner.token)).json.result.status).toBe("running");
    const act = await system.rpc(
      "computer/act",
      {
        computerId,
        botId,
        fencingToken: lease.fencingToken,
        actions: [{ type: "type", text: "continuing" }],
      },
      owner.token,
    );
    expect(act.json.result).toEqual({ completed: 1, total: 1 });
    // Releasing twice is an error, not a silent success.
    const again = await system.rpc("computer/releaseControl", { computerId, botId }, owner.token);
    expect(again.json.error.code).toBe("NOT_IN_CONTROL");
  });

  it("stopBot refuses the canceled run's later actions (fenced)", async () => {
    const botId = await newBot("fenced");
    const { lease, run } = await startRun(botId);
    await system.rpc("computer/stopBot", { computerId, botId }, owner.token);
    const act = await system.rpc(
      "computer/act",
      { computerId, botId, fencingToken: lease.fencingToken, actions: [{ type: "wait", ms: 1 }] },
      owner.token,
    );
    expect(act.json.error.code).toBe("STALE_LEASE");
    expect((await system.rpc("run/get", { runId: run.id }, owner.token)).json.result.status).toBe("canceled");
  });
});
