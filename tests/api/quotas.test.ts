// Per-space quotas through the API on the fake provider: a space's computers (the Team Computer
// included), and the memory and CPUs of those holding a machine, are bounded; a refusal is
// QUOTA_EXCEEDED (409) with the figures, records nothing, and leaves other spaces alone.
import { computers } from "@rakazo/db";
import { insertComputer } from "@rakazo/services";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestSystem, eventually, type TestSystem } from "../support/system.ts";

const EXTERNAL_TOKEN = `ext_${"q".repeat(40)}`;
// Computers default to 4096 MiB and 2 CPUs (DEFAULT_SIZING): two of them fill the memory quota.
const QUOTAS = { computers: 4, memoryMib: 8192, cpus: 4 };
const SMALL = { memoryMib: 256, cpus: 0.5 };

let system: TestSystem;
type Tenant = Awaited<ReturnType<TestSystem["newTenant"]>>;

beforeAll(async () => {
  system = await createTestSystem({ quotas: QUOTAS, externalToken: EXTERNAL_TOKEN });
  await system.startWorker();
}, 60_000);
afterAll(() => system?.close());

const call = (tenant: Tenant, name: string, body: unknown) => system.rpc(name, body, tenant.token);

async function ok(tenant: Tenant, name: string, body: unknown) {
  const res = await call(tenant, name, body);
  expect(res.status, `${name}: ${JSON.stringify(res.json)}`).toBe(200);
  return res.json.result;
}

async function refusedByQuota(tenant: Tenant, name: string, body: unknown) {
  const res = await call(tenant, name, body);
  expect(res.status, `${name}: ${JSON.stringify(res.json)}`).toBe(409);
  expect(res.json.error.code).toBe("QUOTA_EXCEEDED");
  return res.json.error as { message: string; details: Record<string, unknown> };
}

const create = (tenant: Tenant, size: { memoryMib?: number; cpus?: number } = {}) =>
  call(tenant, "computer/create", { spaceId: tenant.spaceId, size });

const stateOf = async (tenant: Tenant, computerId: string) =>
  (await ok(tenant, "computer/get", { computerId })).state as string;

/** Waits for the stored state (a deleted computer answers NOT_FOUND through the API). */
const reaches = (computerId: string, state: string) =>
  eventually(async () => {
    const [row] = await system.ctx.db.select().from(computers).where(eq(computers.id, computerId));
    return row?.state === state ? true : undefined;
  });

describe("per-space quotas", () => {
  it("counts the Team Computer and refuses a computer past the space's limit; other spaces go on", async () => {
    const tenant = await system.newTenant("counter");
    for (let i = 0; i < QUOTAS.computers - 1; i += 1) expect((await create(tenant, SMALL)).status).toBe(200);
    const refused = await refusedByQuota(tenant, "computer/create", { spaceId: tenant.spaceId, size: SMALL });
    expect(refused.details).toEqual({ quota: "computers", limit: 4, used: 4, requested: 1 });
    expect(await ok(tenant, "computer/list", { spaceId: tenant.spaceId })).toHaveLength(QUOTAS.computers);

    const neighbour = await system.newTenant("neighbour");
    expect((await create(neighbour, SMALL)).status).toBe(200);

    // A new space starts with its Team Computer, counted, and may add the rest.
    const space = await ok(tenant, "space/create", { name: "Second" });
    const inSpace = { ...tenant, spaceId: space.id };
    for (let i = 0; i < QUOTAS.computers - 1; i += 1) expect((await create(inSpace, SMALL)).status).toBe(200);
    expect((await refusedByQuota(inSpace, "computer/create", { spaceId: space.id })).details).toMatchObject({
      quota: "computers",
    });

    // A deleted computer frees its slot.
    const [, first] = await ok(tenant, "computer/list", { spaceId: tenant.spaceId });
    await ok(tenant, "computer/delete", { computerId: first.id });
    await reaches(first.id, "deleted");
    expect((await create(tenant, SMALL)).status).toBe(200);
  });

  it("bounds the memory of running computers at create and start; a stopped one holds none", async () => {
    const tenant = await system.newTenant("memory");
    const big = { memoryMib: 4096, cpus: 1 };
    const a = (await ok(tenant, "computer/create", { spaceId: tenant.spaceId, size: big })).id;
    const b = (await ok(tenant, "computer/create", { spaceId: tenant.spaceId, size: big })).id;
    const refused = await refusedByQuota(tenant, "computer/create", { spaceId: tenant.spaceId, size: SMALL });
    expect(refused.details).toEqual({ quota: "memoryMib", limit: 8192, used: 8192, requested: 256 });

    await reaches(b, "running");
    await ok(tenant, "computer/stop", { computerId: b });
    await reaches(b, "stopped");
    const c = (
      await ok(tenant, "computer/create", { spaceId: tenant.spaceId, size: { memoryMib: 1024, cpus: 1 } })
    ).id;
    const start = await refusedByQuota(tenant, "computer/start", { computerId: b });
    expect(start.details).toEqual({ quota: "memoryMib", limit: 8192, used: 5120, requested: 4096 });
    expect(await stateOf(tenant, b)).toBe("stopped");

    // The Team Computer's first use gives it a machine of the default size: refused the same way.
    const [team] = await ok(tenant, "computer/list", { spaceId: tenant.spaceId });
    expect(team).toMatchObject({ mode: "team", state: "unprovisioned" });
    const exec = await refusedByQuota(tenant, "computer/exec", { computerId: team.id, argv: ["true"] });
    expect(exec.details).toEqual({ quota: "memoryMib", limit: 8192, used: 5120, requested: 4096 });
    expect(await stateOf(tenant, team.id)).toBe("unprovisioned");

    // A computer being deleted gives its machine up for good: the start fits again.
    await ok(tenant, "computer/delete", { computerId: c });
    expect((await ok(tenant, "computer/start", { computerId: b })).state).toBe("provisioning");
    await reaches(a, "running");
    await reaches(b, "running");
  });

  it("bounds the CPUs of running computers", async () => {
    const tenant = await system.newTenant("cpus");
    await ok(tenant, "computer/create", { spaceId: tenant.spaceId, size: { memoryMib: 256, cpus: 2 } });
    const refused = await refusedByQuota(tenant, "computer/create", {
      spaceId: tenant.spaceId,
      size: { memoryMib: 256, cpus: 2.5 },
    });
    expect(refused.details).toEqual({ quota: "cpus", limit: 4, used: 2, requested: 2.5 });
  });

  it("checks a recovery like a start: a failed computer holds no machine until it comes back", async () => {
    const tenant = await system.newTenant("recoverer");
    const big = { memoryMib: 4096, cpus: 1 };
    const x = (await ok(tenant, "computer/create", { spaceId: tenant.spaceId, size: big })).id;
    await ok(tenant, "computer/create", { spaceId: tenant.spaceId, size: big });
    await reaches(x, "running");
    await system.ctx.db
      .update(computers)
      .set({ state: "failed", lastError: "test: failed" })
      .where(eq(computers.id, x));
    await ok(tenant, "computer/create", { spaceId: tenant.spaceId, size: big });
    const refused = await refusedByQuota(tenant, "computer/recover", { computerId: x });
    expect(refused.details).toEqual({ quota: "memoryMib", limit: 8192, used: 8192, requested: 4096 });
    expect(await stateOf(tenant, x)).toBe("failed");
    expect(await ok(tenant, "computer/operations", { computerId: x })).toEqual([]);
    // With `history`, the finished ones too: its provisioning, and still no recovery.
    const history = await ok(tenant, "computer/operations", { computerId: x, history: true });
    expect(history.map((o: { kind: string; status: string }) => `${o.kind}:${o.status}`)).toEqual([
      "provision:succeeded",
    ]);
  });

  it("lets exactly one of several racing creates take the space's last slot", async () => {
    const tenant = await system.newTenant("racer");
    for (let i = 0; i < QUOTAS.computers - 2; i += 1) expect((await create(tenant, SMALL)).status).toBe(200);
    const racing = await Promise.all([1, 2, 3, 4, 5].map(() => create(tenant, SMALL)));
    expect(racing.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409]);
    for (const r of racing.filter((r) => r.status === 409)) expect(r.json.error.code).toBe("QUOTA_EXCEEDED");
    expect(await ok(tenant, "computer/list", { spaceId: tenant.spaceId })).toHaveLength(QUOTAS.computers);
  });

  it("holds a create's check until a racing create in the same space has committed", async () => {
    const tenant = await system.newTenant("holder");
    for (let i = 0; i < QUOTAS.computers - 2; i += 1) expect((await create(tenant, SMALL)).status).toBe(200);
    // The first create takes the last slot and stays uncommitted while the second one runs.
    let checked = false;
    let commit!: () => void;
    const committing = new Promise<void>((resolve) => (commit = resolve));
    const first = system.ctx.db.transaction(async (tx) => {
      await insertComputer(tx, system.ctx, {
        spaceId: tenant.spaceId,
        name: "first",
        mode: "team",
        ownerBotId: null,
        size: SMALL,
      });
      checked = true;
      await committing;
    });
    await eventually(async () => (checked ? true : undefined));
    const second = create(tenant, SMALL);
    await new Promise((done) => setTimeout(done, 300));
    commit();
    await first;
    const res = await second;
    expect(res.status, JSON.stringify(res.json)).toBe(409);
    expect(res.json.error).toMatchObject({
      code: "QUOTA_EXCEEDED",
      details: { quota: "computers", used: 4 },
    });
  });

  it("applies to the external surface's creates, not to adopting an existing computer", async () => {
    const ext = (body: unknown) => system.rpc("external/computer/create", body, EXTERNAL_TOKEN);
    expect((await ext({ screen: "q1", wait: false })).status).toBe(200);
    expect((await ext({ screen: "q2", wait: false })).status).toBe(200);
    const refused = await ext({ screen: "q3", wait: false });
    expect(refused.status).toBe(409);
    expect(refused.json.error).toMatchObject({
      code: "QUOTA_EXCEEDED",
      details: { quota: "memoryMib", limit: 8192, used: 8192, requested: 4096 },
    });
    const adopted = await ext({ screen: "q1", wait: false });
    expect(adopted.status).toBe(200);
    expect(adopted.json.result.created).toBe(false);
  });
});
