// OPS-4 with real processes: the API is killed (SIGKILL, via RAKAZO_TEST_CRASH_AFTER) between an
// operation's commit and its enqueue, and the reconciler finishes provision, stop and delete; a
// worker hosting an agent run is killed with kill -9 and the run ends failed once its lease
// lapses, freeing the bot for a person (TKO-1).
import { computerOperations, computers, executionLeases, runs } from "@rakazo/db";
import { LAPSED_RUN_ERROR } from "@rakazo/services";
import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Child, freePort, killHard, startChild, startTestWorker } from "../support/processes.ts";
import { createTestSystem, eventually, runningComputer, type TestSystem } from "../support/system.ts";

let system: TestSystem;
const children: Child[] = [];

beforeAll(async () => {
  system = await createTestSystem({ agentModel: "faux:stuck" });
});
afterAll(async () => {
  for (const child of children) await killHard(child);
  await system?.close();
});

/** Starts the real API process that dies right after an operation's commit, and calls `rpc` on it. */
async function callCrashingApi(
  rpc: string,
  body: unknown,
  token: string,
  crash: { RAKAZO_TEST_CRASH_AFTER: string; AGENT_MODEL?: string } = {
    RAKAZO_TEST_CRASH_AFTER: "operation-commit",
  },
): Promise<void> {
  const port = await freePort();
  const api = startChild("apps/api/src/main.ts", {
    DATABASE_URL: system.database.url,
    DATA_DIR: system.dataDir,
    RAKAZO_PROVIDER: "fake",
    API_PORT: String(port),
    ...crash,
  });
  children.push(api);
  const { process: child, output } = api;
  const url = `http://127.0.0.1:${port}`;
  await eventually(async () => {
    if (child.exitCode !== null) throw new Error(`api exited early:\n${output.join("")}`);
    return (
      (await fetch(`${url}/health`).then(
        (r) => r.ok,
        () => false,
      )) || undefined
    );
  }, 30_000);
  const exited = new Promise<NodeJS.Signals | null>((done) =>
    child.once("exit", (_c, signal) => done(signal)),
  );
  // The API dies mid-request: the client sees the connection drop, not a response.
  const response = await fetch(`${url}/rpc/${rpc}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  }).then(
    (r) => r.status,
    () => "dropped",
  );
  expect(response).toBe("dropped");
  expect(await exited).toBe("SIGKILL");
}

/**
 * An agent run hosted by a child worker (the only worker then): it provisions the computer, and
 * its heartbeat has shortened the run's lease from 120 s to 1.5 s when this returns.
 */
async function runHostedByChildWorker(tenant: Awaited<ReturnType<TestSystem["newTenant"]>>) {
  const worker = await startTestWorker({
    DATABASE_URL: system.database.url,
    TEST_DATA_DIR: system.dataDir,
    TEST_AGENT: "stuck",
  });
  children.push(worker);
  const computerId = await runningComputer(system, tenant);
  const started = await system.rpc(
    "agent/run",
    { computerId, botId: tenant.botId, task: "wait" },
    tenant.token,
  );
  expect(started.status, JSON.stringify(started.json)).toBe(200);
  const runId = started.json.result.id as string;
  // The child hosts the run: its heartbeat shortens the lease from 120 s to 1.5 s.
  await eventually(async () => {
    const [lease] = await system.ctx.db
      .select()
      .from(executionLeases)
      .where(eq(executionLeases.holderId, runId));
    const expires = lease?.expiresAt;
    return expires && expires.getTime() < Date.now() + 10_000 ? true : undefined;
  }, 30_000);
  return { worker, computerId, runId };
}

async function stateOf(computerId: string) {
  const [row] = await system.ctx.db.select().from(computers).where(eq(computers.id, computerId));
  return row?.state;
}

describe("the reconciler after an API crash between commit and enqueue (OPS-4)", () => {
  it("finishes provision, stop and delete", async () => {
    const tenant = await system.newTenant("crash-ops");
    await callCrashingApi("computer/create", { spaceId: tenant.spaceId }, tenant.token);
    const [op] = await system.ctx.db.select().from(computerOperations);
    if (!op) throw new Error("the operation was not committed");
    const computerId = op.computerId;
    expect(op).toMatchObject({ kind: "provision", status: "queued" });
    expect(await stateOf(computerId)).toBe("provisioning");
    // No job was sent: without the reconciler nothing would ever provision it.
    await new Promise((done) => setTimeout(done, 1_500));
    expect(await stateOf(computerId)).toBe("provisioning");

    const reconciling = await system.startWorker({
      reconciler: { intervalMs: 300, queuedGraceMs: 1_000, runGraceMs: 500, workerSilenceMs: 60_000 },
    });
    await eventually(async () => ((await stateOf(computerId)) === "running" ? true : undefined), 20_000);

    await callCrashingApi("computer/stop", { computerId }, tenant.token);
    await eventually(async () => ((await stateOf(computerId)) === "stopped" ? true : undefined), 20_000);

    await callCrashingApi("computer/delete", { computerId }, tenant.token);
    await eventually(async () => ((await stateOf(computerId)) === "deleted" ? true : undefined), 20_000);

    const ops = await system.ctx.db
      .select()
      .from(computerOperations)
      .where(eq(computerOperations.computerId, computerId));
    expect(ops.map((o) => [o.kind, o.status]).sort()).toEqual([
      ["delete", "succeeded"],
      ["provision", "succeeded"],
      ["stop", "succeeded"],
    ]);
    // Republished once each, under the operation's own job id (never a second job).
    const logs = system.logLines.filter((l) => l.includes('"msg":"operation.republished"'));
    expect(logs).toHaveLength(3);
    // The next test's agent run must be hosted by its killed worker alone.
    await reconciling.stop({ timeoutMs: 5_000 });
  }, 120_000);
});

describe("a run whose worker was killed (OPS-4)", () => {
  it("ends failed after its lease lapses, freeing the bot for takeover", async () => {
    const tenant = await system.newTenant("crash-run");
    const { worker, computerId, runId } = await runHostedByChildWorker(tenant);
    await killHard(worker);

    // Before the reconciler: the bot is "working", a person is told to stop it first.
    const blocked = await system.rpc(
      "computer/takeControl",
      { computerId, botId: tenant.botId },
      tenant.token,
    );
    expect(blocked.json.error?.code).toBe("TAKEOVER_CONFLICT");

    const reconciling = await system.startWorker({
      reconciler: { intervalMs: 300, queuedGraceMs: 1_000, runGraceMs: 500, workerSilenceMs: 60_000 },
    });
    const killedAt = Date.now();
    const run = await eventually(async () => {
      const [row] = await system.ctx.db.select().from(runs).where(eq(runs.id, runId));
      return row?.status === "failed" ? row : undefined;
    }, 20_000);
    // Lease 1.5 s + grace 0.5 s + one pass; generous margin for a loaded machine.
    expect(Date.now() - killedAt).toBeLessThan(15_000);
    expect(run.error).toBe(LAPSED_RUN_ERROR);
    const taken = await system.rpc("computer/takeControl", { computerId, botId: tenant.botId }, tenant.token);
    expect(taken.status, JSON.stringify(taken.json)).toBe(200);
    // Later runs must be hosted by their own child workers (this one has no agent model).
    await reconciling.stop({ timeoutMs: 5_000 });
  }, 120_000);
});

describe("an agent run whose job was never sent (OPS-4)", () => {
  it("is hosted once the reconciler sends its job again, under its own job id", async () => {
    const tenant = await system.newTenant("crash-agent-run");
    const provisioner = await system.startWorker();
    const computerId = await runningComputer(system, tenant);
    await provisioner.stop({ timeoutMs: 5_000 });
    await callCrashingApi("agent/run", { computerId, botId: tenant.botId, task: "wait" }, tenant.token, {
      RAKAZO_TEST_CRASH_AFTER: "run-commit",
      AGENT_MODEL: "faux:stuck",
    });
    const [committed] = await system.ctx.db.select().from(runs).where(eq(runs.botId, tenant.botId));
    if (!committed) throw new Error("the run was not committed");
    expect(committed).toMatchObject({ status: "running", task: "wait", hostedAt: null });

    // A worker with the reconciler (3 s grace): it hosts the run only if the job is sent again.
    const worker = await startTestWorker({
      DATABASE_URL: system.database.url,
      TEST_DATA_DIR: system.dataDir,
      TEST_AGENT: "stuck",
      TEST_SWEEP_MS: "300",
    });
    children.push(worker);
    const hosted = await eventually(async () => {
      const [row] = await system.ctx.db.select().from(runs).where(eq(runs.id, committed.id));
      return row?.hostedAt ? row : undefined;
    }, 30_000);
    expect((hosted.hostedAt?.getTime() ?? 0) - committed.createdAt.getTime()).toBeLessThan(25_000);
    expect(worker.output.join("")).toContain('"msg":"run.republished"');
    const jobs = await system.ctx.db.execute<{ count: number }>(
      sql`select count(*)::int as count from pgboss.job where name = 'agent.run' and data->>'runId' = ${committed.id}`,
    );
    expect(jobs[0]?.count, "jobs sent for the run").toBe(1);
    await killHard(worker);
  }, 120_000);
});

describe("a run waiting for a person whose worker was killed (OPS-4, TKO-3)", () => {
  it("ends failed after its lease lapses instead of waiting forever", async () => {
    const tenant = await system.newTenant("crash-waiting-run");
    const { worker, runId } = await runHostedByChildWorker(tenant);
    // As request_takeover leaves it: waiting for a person, its session kept in the worker.
    await system.ctx.db
      .update(runs)
      .set({ status: "waiting_takeover", takeoverReason: "a captcha", waitingSince: new Date() })
      .where(eq(runs.id, runId));
    await killHard(worker);

    await system.startWorker({
      reconciler: { intervalMs: 300, queuedGraceMs: 60_000, runGraceMs: 500, workerSilenceMs: 60_000 },
    });
    const run = await eventually(async () => {
      const [row] = await system.ctx.db.select().from(runs).where(eq(runs.id, runId));
      return row?.status === "failed" ? row : undefined;
    }, 20_000).catch(async (error: unknown) => {
      const [row] = await system.ctx.db.select().from(runs).where(eq(runs.id, runId));
      const leases = await system.ctx.db
        .select()
        .from(executionLeases)
        .where(eq(executionLeases.holderId, runId));
      throw new Error(
        `${(error as Error).message}: run ${JSON.stringify(row)} leases ${JSON.stringify(leases)}`,
      );
    });
    expect(run.error).toBe(LAPSED_RUN_ERROR);
  }, 120_000);
});
