// CMP-3: fenced per-bot execution leases against real Postgres.
import { acquireExecutionLease } from "@rakazo/services";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestSystem, runningComputer, type TestSystem } from "../support/system.ts";

let system: TestSystem;
let tenant: Awaited<ReturnType<TestSystem["newTenant"]>>;
let computerId: string;
let otherBotId: string;

beforeAll(async () => {
  system = await createTestSystem();
  await system.startWorker();
  tenant = await system.newTenant("dana");
  computerId = await runningComputer(system, tenant);
  otherBotId = (await system.rpc("bot/create", { spaceId: tenant.spaceId, name: "second" }, tenant.token))
    .json.result.id;
});
afterAll(() => system.close());

describe("execution leases", () => {
  it("50 parallel acquisitions of one bot's lease yield exactly one holder", async () => {
    const attempts = await Promise.allSettled(
      Array.from({ length: 50 }, (_, i) =>
        acquireExecutionLease(system.ctx, {
          computerId,
          botId: tenant.botId,
          holderId: `holder-${i}`,
          ttlMs: 60_000,
        }),
      ),
    );
    const won = attempts.filter((a) => a.status === "fulfilled");
    const lost = attempts.filter((a) => a.status === "rejected");
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(49);
    for (const l of lost) expect((l as PromiseRejectedResult).reason.code).toBe("LEASE_HELD");
  });

  it("after expiry and re-acquisition, the old holder's actions are refused with STALE_LEASE", async () => {
    const first = (
      await system.rpc("run/start", { computerId, botId: otherBotId, leaseTtlMs: 1_000 }, tenant.token)
    ).json.result;
    const oldToken = first.lease.fencingToken;
    const ok = await system.rpc(
      "computer/act",
      { computerId, botId: otherBotId, fencingToken: oldToken, actions: [{ type: "type", text: "a" }] },
      tenant.token,
    );
    expect(ok.status).toBe(200);

    await new Promise((done) => setTimeout(done, 1_200));
    const second = (await system.rpc("run/start", { computerId, botId: otherBotId }, tenant.token)).json
      .result;
    expect(second.lease.fencingToken).toBeGreaterThan(oldToken);

    const stale = { computerId, botId: otherBotId, fencingToken: oldToken };
    for (const [rpc, body] of [
      ["computer/act", { ...stale, actions: [{ type: "type", text: "stale" }] }],
      ["computer/observe", stale],
      [
        "computer/exec",
        { computerId, argv: ["echo", "stale"], lease: { botId: otherBotId, fencingToken: oldToken } },
      ],
      ["run/heartbeat", { runId: first.run.id, fencingToken: oldToken }],
      ["run/complete", { runId: first.run.id, fencingToken: oldToken }],
    ] as const) {
      const res = await system.rpc(rpc, body, tenant.token);
      expect([rpc, res.status, res.json.error?.code]).toEqual([rpc, 409, "STALE_LEASE"]);
    }
    // The new holder is unaffected.
    const fresh = await system.rpc(
      "computer/act",
      {
        computerId,
        botId: otherBotId,
        fencingToken: second.lease.fencingToken,
        actions: [{ type: "key", keys: "Return" }],
      },
      tenant.token,
    );
    expect(fresh.json.result).toEqual({ completed: 1, total: 1 });
    // Acting without a token while a run holds the lease is refused too.
    const anonymous = await system.rpc(
      "computer/act",
      { computerId, botId: otherBotId, actions: [{ type: "wait", ms: 1 }] },
      tenant.token,
    );
    expect(anonymous.json.error.code).toBe("LEASE_HELD");
  });

  it("two different bots act on one computer at the same time", async () => {
    const botA = (await system.rpc("bot/create", { spaceId: tenant.spaceId, name: "a" }, tenant.token)).json
      .result.id;
    const botB = (await system.rpc("bot/create", { spaceId: tenant.spaceId, name: "b" }, tenant.token)).json
      .result.id;
    const [runA, runB] = await Promise.all(
      [botA, botB].map(
        async (botId) => (await system.rpc("run/start", { computerId, botId }, tenant.token)).json.result,
      ),
    );
    const results = await Promise.all(
      [
        [botA, runA],
        [botB, runB],
      ].map(([botId, run]) =>
        system.rpc(
          "computer/act",
          {
            computerId,
            botId,
            fencingToken: run.lease.fencingToken,
            actions: [{ type: "type", text: `from ${botId}` }],
          },
          tenant.token,
        ),
      ),
    );
    expect(results.map((r) => r.json.result)).toEqual([
      { completed: 1, total: 1 },
      { completed: 1, total: 1 },
    ]);
    const frames = await Promise.all(
      [
        [botA, runA],
        [botB, runB],
      ].map(([botId, run]) =>
        system.rpc(
          "computer/observe",
          { computerId, botId, fencingToken: run.lease.fencingToken },
          tenant.token,
        ),
      ),
    );
    expect(frames[0]?.json.result.slot.index).not.toBe(frames[1]?.json.result.slot.index);
  });

  it("a bot of another space cannot start a run on this computer", async () => {
    const stranger = await system.newTenant("eve");
    const res = await system.rpc("run/start", { computerId, botId: stranger.botId }, tenant.token);
    expect(res.json.error.code).toBe("NOT_FOUND");
  });
});
