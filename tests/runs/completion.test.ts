// CMP-6: completion keeps the bot's screen for the next run; failure and cancellation tear it down.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestSystem, runningComputer, type TestSystem } from "../support/system.ts";

let system: TestSystem;
let tenant: Awaited<ReturnType<TestSystem["newTenant"]>>;
let computerId: string;

beforeAll(async () => {
  system = await createTestSystem();
  await system.startWorker();
  tenant = await system.newTenant("hal");
  computerId = await runningComputer(system, tenant);
});
afterAll(() => system.close());

async function desktops() {
  const row = await system.ctx.db.query.computers.findFirst({ where: (c, { eq }) => eq(c.id, computerId) });
  return system.provider.sandbox(row?.providerRef as string).desktop?.list() ?? [];
}

async function runThatTypes(botId: string, text: string) {
  const { run, lease } = (await system.rpc("run/start", { computerId, botId }, tenant.token)).json.result;
  await system.rpc(
    "computer/act",
    { computerId, botId, fencingToken: lease.fencingToken, actions: [{ type: "type", text }] },
    tenant.token,
  );
  const frame = await system.rpc(
    "computer/observe",
    { computerId, botId, fencingToken: lease.fencingToken },
    tenant.token,
  );
  return { run, lease, frame: frame.json.result };
}

describe("run endings", () => {
  it("completion keeps the screen: same slot and generation, same frame for the next run", async () => {
    const first = await runThatTypes(tenant.botId, "signed in");
    const done = await system.rpc(
      "run/complete",
      { runId: first.run.id, fencingToken: first.lease.fencingToken },
      tenant.token,
    );
    expect(done.json.result.status).toBe("completed");
    expect((await desktops()).map((d) => [d.botId, d.slot])).toEqual([[tenant.botId, first.frame.slot]]);

    const { lease } = (await system.rpc("run/start", { computerId, botId: tenant.botId }, tenant.token)).json
      .result;
    const next = await system.rpc(
      "computer/observe",
      { computerId, botId: tenant.botId, fencingToken: lease.fencingToken },
      tenant.token,
    );
    expect(next.json.result.slot).toEqual(first.frame.slot);
    expect(next.json.result.frameHash).toBe(first.frame.frameHash);
  });

  it.each(["fail", "cancel"])("%s tears the bot's screen down", async (outcome) => {
    const botId = (await system.rpc("bot/create", { spaceId: tenant.spaceId, name: outcome }, tenant.token))
      .json.result.id;
    const { run, lease } = await runThatTypes(botId, "work");
    expect((await desktops()).map((d) => d.botId)).toContain(botId);
    const ended = await system.rpc(
      `run/${outcome}`,
      { runId: run.id, fencingToken: lease.fencingToken },
      tenant.token,
    );
    expect(ended.json.result.status).toBe(outcome === "fail" ? "failed" : "canceled");
    expect((await desktops()).map((d) => d.botId)).not.toContain(botId);
  });

  it("a finished run cannot be finished again", async () => {
    const botId = (await system.rpc("bot/create", { spaceId: tenant.spaceId, name: "twice" }, tenant.token))
      .json.result.id;
    const { run, lease } = (await system.rpc("run/start", { computerId, botId }, tenant.token)).json.result;
    await system.rpc("run/complete", { runId: run.id, fencingToken: lease.fencingToken }, tenant.token);
    const again = await system.rpc(
      "run/complete",
      { runId: run.id, fencingToken: lease.fencingToken },
      tenant.token,
    );
    expect(again.json.error.code).toBe("STALE_LEASE");
  });
});
