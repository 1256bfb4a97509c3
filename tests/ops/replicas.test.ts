/**
 * Replicas (ARCH-4, OPS-4): two real API processes and two real worker processes on
 * one Postgres, under a bounded load generator on loopback — computers created, stopped and
 * started through both APIs alternately while readers poll both. Every accepted request has
 * exactly one operation, every operation finished (none lost), and every operation's pg-boss job
 * exists once and ran once (no job twice). Its counts are recorded for the bench report
 * (tests/support/figures.ts → `pnpm bench`).
 */
import { computerOperations, computers, newId } from "@rakazo/db";
import { and, eq, inArray, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordFigures } from "../support/figures.ts";
import { type Child, freePort, killHard, startChild } from "../support/processes.ts";
import { createTestSystem, eventually, type TestSystem } from "../support/system.ts";

let system: TestSystem;
const children: Child[] = [];
const apis: string[] = [];

const COMPUTERS_PER_TENANT = 3;
const TENANTS = 2;
/** The load generator never has more than this many requests in flight. */
const IN_FLIGHT = 4;

async function startApi(): Promise<string> {
  const port = await freePort();
  const api = startChild("apps/api/src/main.ts", {
    DATABASE_URL: system.database.url,
    DATA_DIR: system.dataDir,
    RAKAZO_PROVIDER: "fake",
    API_HOST: "127.0.0.1",
    API_PORT: String(port),
  });
  children.push(api);
  const url = `http://127.0.0.1:${port}`;
  await eventually(async () => {
    if (api.process.exitCode !== null) throw new Error(`api exited early:\n${api.output.join("")}`);
    return (
      (await fetch(`${url}/health`).then(
        (r) => r.ok,
        () => false,
      )) || undefined
    );
  }, 120_000);
  return url;
}

beforeAll(async () => {
  system = await createTestSystem();
  apis.push(await startApi(), await startApi());
  for (let i = 0; i < 2; i++) {
    const worker = startChild("tests/support/worker-process.ts", {
      DATABASE_URL: system.database.url,
      TEST_DATA_DIR: system.dataDir,
      TEST_SWEEP_MS: "250",
    });
    children.push(worker);
    // Four Node processes start on a shared machine: a generous wait, not startTestWorker's 30 s.
    await eventually(async () => {
      if (worker.process.exitCode !== null)
        throw new Error(`worker exited early:\n${worker.output.join("")}`);
      return worker.output.join("").includes('"msg":"worker.started"') || undefined;
    }, 120_000);
  }
}, 400_000);

afterAll(async () => {
  for (const child of children) await killHard(child);
  await system?.close();
});

/** The computers the first test made (running when it ends), for the claim test. */
const fleet: { id: string; token: string; botId: string }[] = [];

let calls = 0;
let errors = 0;
async function call(name: string, body: unknown, token: string): Promise<any> {
  const api = apis[calls++ % apis.length] as string;
  const response = await fetch(`${api}/rpc/${name}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  });
  const json = (await response.json()) as { result?: any };
  if (response.status !== 200) {
    errors++;
    throw new Error(`${name} answered ${response.status}: ${JSON.stringify(json)}`);
  }
  return json.result;
}

/** Runs `tasks` with at most IN_FLIGHT at once. */
async function bounded<T>(tasks: (() => Promise<T>)[]): Promise<T[]> {
  const results: T[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < tasks.length) {
        const at = next++;
        results[at] = await (tasks[at] as () => Promise<T>)();
      }
    }),
  );
  return results;
}

/** One RPC through the next API, answered whatever its status (refusals are expected here). */
async function raw(name: string, body: unknown, token: string): Promise<{ status: number; json: any }> {
  const api = apis[calls++ % apis.length] as string;
  const response = await fetch(`${api}/rpc/${name}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: await response.json() };
}

async function allIn(state: string, ids: { id: string; token: string }[]): Promise<void> {
  await eventually(async () => {
    const states = await Promise.all(ids.map((c) => call("computer/get", { computerId: c.id }, c.token)));
    return states.every((c) => c.state === state) || undefined;
  }, 120_000);
}

describe("two APIs and two workers on one Postgres", () => {
  it("runs every operation exactly once and loses none", async () => {
    const tenants = await Promise.all(
      Array.from({ length: TENANTS }, (_, i) => system.newTenant(`replica${i}`)),
    );
    let accepted = 0;
    const created = await bounded(
      tenants.flatMap((t) =>
        Array.from({ length: COMPUTERS_PER_TENANT }, () => async () => {
          const { id } = await call("computer/create", { spaceId: t.spaceId }, t.token);
          accepted++;
          return { id: id as string, token: t.token, botId: t.botId };
        }),
      ),
    );
    // Readers on both APIs for the whole run.
    let reading = true;
    const readers = Promise.all(
      created.slice(0, 2).map(async (c) => {
        while (reading) {
          await call("computer/get", { computerId: c.id }, c.token);
          await new Promise((done) => setTimeout(done, 50));
        }
      }),
    );
    await allIn("running", created);
    for (const verb of ["computer/stop", "computer/start"] as const) {
      await bounded(
        created.map((c) => async () => {
          await call(verb, { computerId: c.id }, c.token);
          accepted++;
        }),
      );
      await allIn(verb === "computer/stop" ? "stopped" : "running", created);
    }
    reading = false;
    await readers;
    fleet.push(...created);

    const operations = await system.database.db
      .select()
      .from(computerOperations)
      .where(
        inArray(
          computerOperations.computerId,
          created.map((c) => c.id),
        ),
      );
    // Each accepted request made one operation (besides any the system adds on its own) …
    const requested = operations.filter((o) => ["provision", "stop", "start"].includes(o.kind));
    expect(requested).toHaveLength(accepted);
    // … and every one finished: none lost, none failed.
    expect(requested.filter((o) => o.status !== "succeeded")).toEqual([]);
    const workers = new Set(requested.map((o) => o.workerId));
    // pg-boss: one job per operation, completed, never retried (no job ran twice).
    const jobIds = requested.map((o) => o.jobId as string);
    const jobs = (await system.database.db.execute(
      sql`select id::text as id, state, retry_count from pgboss.job where id::text in ${jobIds}`,
    )) as unknown as { id: string; state: string; retry_count: number }[];
    expect(jobs).toHaveLength(jobIds.length);
    expect(jobs.filter((j) => j.state !== "completed" || j.retry_count !== 0)).toEqual([]);
    expect(errors).toBe(0);

    recordFigures("replicas", [
      { name: "requests through 2 APIs", value: calls, unit: "requests" },
      { name: "request errors", value: errors, unit: "errors", target: "= 0" },
      { name: "operations accepted", value: accepted, unit: "operations" },
      {
        name: "operations lost or failed",
        value: accepted - requested.filter((o) => o.status === "succeeded").length,
        unit: "operations",
        target: "= 0",
      },
      {
        name: "jobs run more than once",
        value: jobs.filter((j) => j.retry_count !== 0).length,
        unit: "jobs",
        target: "= 0",
      },
      { name: "workers that claimed operations", value: workers.size, unit: "workers" },
    ]);
  }, 600_000);

  it("never holds a lease twice; the idle sweeper and the reconciler claim each computer once", async () => {
    expect(fleet).toHaveLength(TENANTS * COMPUTERS_PER_TENANT);
    const { db } = system.database;
    const ids = fleet.map((c) => c.id);

    // Leases (CMP-3): each round, RACERS run/start for the same bot on each computer at once,
    // through both APIs: exactly one is granted, the rest refused LEASE_HELD, and the fencing
    // tokens granted to a bot only grow.
    const RACERS = 4;
    const ROUNDS = 3;
    const granted = new Map<string, number[]>();
    let refused = 0;
    for (let round = 0; round < ROUNDS; round++) {
      await Promise.all(
        fleet.map(async (c) => {
          const answers = await Promise.all(
            Array.from({ length: RACERS }, () =>
              raw("run/start", { computerId: c.id, botId: c.botId }, c.token),
            ),
          );
          const won = answers.filter((a) => a.status === 200);
          expect(won, JSON.stringify(answers.map((a) => a.json))).toHaveLength(1);
          const lost = answers.filter((a) => a.status !== 200).map((a) => a.json.error?.code);
          expect(lost).toEqual(Array(RACERS - 1).fill("LEASE_HELD"));
          refused += lost.length;
          const { run, lease } = (won[0] as { json: any }).json.result;
          granted.set(c.id, [...(granted.get(c.id) ?? []), lease.fencingToken as number]);
          const done = await raw(
            "run/complete",
            { runId: run.id, fencingToken: lease.fencingToken },
            c.token,
          );
          expect(done.status, JSON.stringify(done.json)).toBe(200);
        }),
      );
    }
    for (const tokens of granted.values()) {
      expect(tokens).toHaveLength(ROUNDS);
      expect(tokens).toEqual([...tokens].sort((a, b) => a - b));
      expect(new Set(tokens).size).toBe(ROUNDS);
    }

    // Idle sweeper (CMP-7): every computer looks idle at once to both workers' sweepers.
    await db
      .update(computers)
      .set({ lastActivityAt: sql`now() - interval '2 hours'` })
      .where(inArray(computers.id, ids));
    await allIn("stopped", fleet);
    const idleOps = await db
      .select()
      .from(computerOperations)
      .where(and(inArray(computerOperations.computerId, ids), eq(computerOperations.kind, "idle_shutdown")));
    expect(idleOps.map((o) => o.computerId).sort()).toEqual([...ids].sort());
    expect(idleOps.filter((o) => o.status !== "succeeded")).toEqual([]);

    // Reconciler (OPS-4): each computer's provision was committed but never enqueued, as an API
    // killed between the two leaves it; both workers' reconcilers race to republish.
    const missed: string[] = [];
    for (const id of ids) {
      const operationId = newId("operation");
      await db.transaction(async (tx) => {
        await tx.update(computers).set({ state: "provisioning" }).where(eq(computers.id, id));
        await tx
          .insert(computerOperations)
          .values({ id: operationId, computerId: id, kind: "provision", stage: "queued", status: "queued" });
      });
      missed.push(operationId);
    }
    await allIn("running", fleet);
    const jobs = (await db.execute(
      sql`select data->>'operationId' as op, state, retry_count from pgboss.job where data->>'operationId' in ${missed}`,
    )) as unknown as { op: string; state: string; retry_count: number }[];
    expect(jobs.map((j) => j.op).sort()).toEqual([...missed].sort());
    expect(jobs.filter((j) => j.state !== "completed" || j.retry_count !== 0)).toEqual([]);

    // Claims counted from both workers' logs: one sweep claim per computer, one republish per operation.
    const lines = children
      .flatMap((child) => child.output.join("").split("\n"))
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as { msg?: string; computerId?: string; operationId?: string });
    const sweeps = lines.filter(
      (l) => l.msg === "computer.idle_shutdown" && ids.includes(l.computerId ?? ""),
    );
    const republished = lines.filter(
      (l) => l.msg === "operation.republished" && missed.includes(l.operationId ?? ""),
    );
    expect(sweeps.map((l) => l.computerId).sort()).toEqual([...ids].sort());
    expect(republished.map((l) => l.operationId).sort()).toEqual([...missed].sort());

    recordFigures("replicas-claims", [
      { name: "run/start races (same bot, both APIs)", value: ROUNDS * fleet.length, unit: "races" },
      {
        name: "leases granted twice",
        value: [...granted.values()].filter((t) => new Set(t).size !== ROUNDS).length,
        unit: "leases",
        target: "= 0",
      },
      { name: "run/start refused LEASE_HELD", value: refused, unit: "requests" },
      {
        name: "idle sweeps claiming a computer twice",
        value: sweeps.length - ids.length,
        unit: "claims",
        target: "= 0",
      },
      {
        name: "reconciler republishing an operation twice",
        value: republished.length - missed.length,
        unit: "claims",
        target: "= 0",
      },
    ]);
  }, 300_000);
});
