// CMP-7 and TKO-3: whole-computer idle shutdown keeps the workspace; busy computers and
// (on non-billing providers) computers waiting for a human stay up.
import { computerOperations, computers } from "@rakazo/db";
import { sweepIdleComputers } from "@rakazo/services";
import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestSystem, eventually, runningComputer, type TestSystem } from "../support/system.ts";

let system: TestSystem;
let tenant: Awaited<ReturnType<TestSystem["newTenant"]>>;

beforeAll(async () => {
  system = await createTestSystem();
  await system.startWorker({ idle: { idleTimeoutMs: 3_000, takeoverAwakeMs: 60_000, sweepIntervalMs: 300 } });
  tenant = await system.newTenant("ivy");
});
afterAll(() => system.close());

const state = async (id: string) =>
  (await system.ctx.db.select({ s: computers.state }).from(computers).where(eq(computers.id, id)))[0]?.s;

describe("idle shutdown", () => {
  it("stops an unused computer through a durable operation, and a restart finds the workspace intact", async () => {
    const id = await runningComputer(system, tenant);
    await system.rpc("computer/exec", { computerId: id, argv: ["mkdir", "-p", "notes/today"] }, tenant.token);
    await eventually(async () => ((await state(id)) === "stopped" ? true : undefined), 20_000).catch(
      (error: Error) => {
        // Say what the worker did, should this ever time out.
        const worker = system.logLines.filter((l) => /idle|computer\.|pgboss|error/.test(l)).slice(-20);
        throw new Error(`${error.message}; state ${id}; worker log:\n${worker.join("\n")}`);
      },
    );
    const ops = await system.ctx.db
      .select()
      .from(computerOperations)
      .where(eq(computerOperations.computerId, id));
    expect(ops.find((o) => o.kind === "idle_shutdown")).toMatchObject({
      status: "succeeded",
      stage: "stopped",
    });

    await system.rpc("computer/start", { computerId: id }, tenant.token);
    await eventually(async () => ((await state(id)) === "running" ? true : undefined));
    const ls = await system.rpc("computer/exec", { computerId: id, argv: ["ls", "notes"] }, tenant.token);
    expect(ls.json.result.stdout).toBe("today\n");
  });

  it("a computer with a working run is not idle; one whose run waits for a human stays awake on a non-billing provider", async () => {
    const busy = await runningComputer(system, tenant);
    const waiting = await runningComputer(system, tenant);
    await system.rpc(
      "run/start",
      { computerId: busy, botId: tenant.botId, leaseTtlMs: 120_000 },
      tenant.token,
    );
    const { run, lease } = (
      await system.rpc(
        "run/start",
        { computerId: waiting, botId: tenant.botId, leaseTtlMs: 120_000 },
        tenant.token,
      )
    ).json.result;
    await system.rpc(
      "run/requestTakeover",
      { runId: run.id, fencingToken: lease.fencingToken, reason: "CAPTCHA" },
      tenant.token,
    );
    // Well past the idle timeout.
    await system.ctx.db
      .update(computers)
      .set({ lastActivityAt: sql`now() - interval '1 hour'` })
      .where(eq(computers.spaceId, tenant.spaceId));
    await new Promise((done) => setTimeout(done, 1_500));
    expect(await state(busy)).toBe("running");
    expect(await state(waiting)).toBe("running");

    // Past the takeover window, the waiting computer suspends while its run keeps waiting.
    await system.ctx.db.execute(
      sql`update runs set waiting_since = now() - interval '2 hours' where id = ${run.id}`,
    );
    await eventually(async () => ((await state(waiting)) === "stopped" ? true : undefined), 20_000);
    expect((await system.rpc("run/get", { runId: run.id }, tenant.token)).json.result.status).toBe(
      "waiting_takeover",
    );
    expect(await state(busy)).toBe("running");
  });

  it("a computer that just came up is not idle, however long ago it was last used", async () => {
    const id = await runningComputer(system, tenant);
    await system.rpc("computer/stop", { computerId: id }, tenant.token);
    await eventually(async () => ((await state(id)) === "stopped" ? true : undefined));
    await system.ctx.db
      .update(computers)
      .set({ lastActivityAt: sql`now() - interval '1 hour'` })
      .where(eq(computers.id, id));
    await system.rpc("computer/start", { computerId: id }, tenant.token);
    await eventually(async () => ((await state(id)) === "running" ? true : undefined));
    // Several sweeps later it is still up.
    await new Promise((done) => setTimeout(done, 1_200));
    expect(await state(id)).toBe("running");
  });

  it("on a billing provider a waiting run does not keep the computer awake beyond the idle timer", async () => {
    const id = await runningComputer(system, tenant);
    const botId = (await system.rpc("bot/create", { spaceId: tenant.spaceId, name: "billed" }, tenant.token))
      .json.result.id;
    const { run, lease } = (await system.rpc("run/start", { computerId: id, botId }, tenant.token)).json
      .result;
    const backdate = () =>
      system.ctx.db
        .update(computers)
        .set({ lastActivityAt: sql`now() - interval '1 hour'` })
        .where(eq(computers.id, id));
    const billed = {
      ...system.ctx,
      provider: {
        ...system.provider,
        capabilities: { ...system.provider.capabilities, billsWhileRunning: true },
      },
    };
    const policy = { idleTimeoutMs: 60_000, takeoverAwakeMs: 60 * 60_000 };
    // Long unused when the run asks for a human: the request restarts the idle timer, so the
    // human gets a whole idle window, not a computer stopped under them at the next sweep.
    await backdate();
    await system.rpc(
      "run/requestTakeover",
      { runId: run.id, fencingToken: lease.fencingToken, reason: "login" },
      tenant.token,
    );
    expect(await sweepIdleComputers(billed, policy)).not.toContain(id);
    expect(await state(id)).toBe("running");
    // Once that window has passed with nobody there, the waiting run does not keep it awake.
    await backdate();
    expect(await sweepIdleComputers(billed, policy)).toContain(id);
  });
});
