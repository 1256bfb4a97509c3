// computer/get of a running computer whose supervisor is slow to answer (still starting): the
// first read does not wait for it, the report it started is kept for the next read, and a
// computer's report never answers for another computer.
import { computers } from "@rakazo/db";
import { createFakeProvider } from "@rakazo/sandbox";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestSystem, eventually, type TestSystem } from "../support/system.ts";

/** How long the provider's desktop report takes (a supervisor still starting). */
let slowMs = 0;
let system: TestSystem;
let tenant: Awaited<ReturnType<TestSystem["newTenant"]>>;

beforeAll(async () => {
  system = await createTestSystem({
    provider: async (rootDir) => {
      const fake = createFakeProvider({ rootDir });
      return {
        ...fake,
        sandbox(ref) {
          const sandbox = fake.sandbox(ref);
          const desktop = sandbox.desktop;
          if (!desktop?.capacity) return sandbox;
          const capacity = desktop.capacity.bind(desktop);
          return {
            ...sandbox,
            desktop: {
              ...desktop,
              capacity: async () => {
                await new Promise((resolve) => setTimeout(resolve, slowMs));
                return capacity();
              },
            },
          };
        },
      };
    },
  });
  await system.startWorker();
  tenant = await system.newTenant("live");
});

afterAll(async () => {
  await system?.close();
});

/** A running computer, waited for in the database (a computer/get would read its report). */
async function runningComputer(): Promise<{ id: string }> {
  const { id } = (await system.rpc("computer/create", { spaceId: tenant.spaceId }, tenant.token)).json.result;
  await eventually(async () => {
    const [row] = await system.ctx.db.select().from(computers).where(eq(computers.id, id));
    return row?.state === "running" ? true : undefined;
  });
  return { id };
}

describe("computer/get's desktop report", () => {
  it("does not hold the first read of a machine for a slow supervisor, and keeps what it read", async () => {
    const { id } = await runningComputer();
    slowMs = 1_500;
    const started = Date.now();
    const first = await system.rpc("computer/get", { computerId: id }, tenant.token);
    expect(Date.now() - started).toBeLessThan(1_200);
    expect(first.json.result.state).toBe("running");
    expect(first.json.result.desktops).toBeNull();
    // The read it started goes on and answers the next reads.
    await new Promise((resolve) => setTimeout(resolve, 1_700));
    const next = await system.rpc("computer/get", { computerId: id }, tenant.token);
    expect(next.json.result.desktops).toMatchObject({ live: 0 });
    slowMs = 0;
  });

  it("answers each computer with its own report", async () => {
    const a = await runningComputer();
    const b = await runningComputer();
    const observed = await system.rpc(
      "computer/observe",
      { computerId: a.id, botId: tenant.botId },
      tenant.token,
    );
    expect(observed.status, JSON.stringify(observed.json)).toBe(200);
    const [gotA, gotB] = await Promise.all([
      system.rpc("computer/get", { computerId: a.id }, tenant.token),
      system.rpc("computer/get", { computerId: b.id }, tenant.token),
    ]);
    expect(gotA.json.result.desktops).toMatchObject({ live: 1 });
    expect(gotB.json.result.desktops).toMatchObject({ live: 0 });
  });

  it("shows a desktop this process just started on the very next read, inside the report's TTL", async () => {
    const { id } = await runningComputer();
    // Two reads: the first of a machine is not held, the second answers from what it read.
    await system.rpc("computer/get", { computerId: id }, tenant.token);
    await eventually(async () => {
      const got = await system.rpc("computer/get", { computerId: id }, tenant.token);
      return got.json.result.desktops?.live === 0 ? true : undefined;
    });
    const observed = await system.rpc(
      "computer/observe",
      { computerId: id, botId: tenant.botId },
      tenant.token,
    );
    expect(observed.status, JSON.stringify(observed.json)).toBe(200);
    const after = await system.rpc("computer/get", { computerId: id }, tenant.token);
    expect(after.json.result.desktops).toMatchObject({ live: 1 });
  });
});
