// PRV-3 / PER-2 through the API: a machine killed behind the control plane's back (deleted or
// expired at the provider) under a running computer. `computer/stop` has nothing left to save
// and still stops (the last checkpoint stands); `computer/start` finds the stale providerRef
// missing, boots a replacement and restores that checkpoint. What was written after it is lost,
// as it was only on the dead machine.
import { computers } from "@rakazo/db";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestSystem, eventually, runningComputer, type TestSystem } from "../support/system.ts";

let system: TestSystem;
beforeAll(async () => {
  system = await createTestSystem();
  await system.startWorker();
});
afterAll(async () => {
  await system?.close();
});

describe("a computer whose machine is gone", () => {
  it("stops without a save and starts on a replacement with the last checkpoint", async () => {
    const tenant = await system.newTenant("machine-gone");
    const computerId = await runningComputer(system, tenant);
    const row = async () =>
      (await system.ctx.db.select().from(computers).where(eq(computers.id, computerId)))[0];
    const stateIs = (state: string) => async () => ((await row())?.state === state ? true : undefined);
    const client = system.client(tenant.token);
    const first = (await row())?.providerRef as string;
    await system.provider.sandbox(first).files.write("kept.txt", "saved before the loss\n");
    await client.call("computer/stop", { computerId });
    await eventually(stateIs("stopped"));
    await client.call("computer/start", { computerId });
    await eventually(stateIs("running"));
    expect((await row())?.providerRef).toBe(first);
    const saved = (await row())?.homeRevision;
    await system.provider.sandbox(first).files.write("lost.txt", "only on the machine\n");

    await system.provider.destroy(first);
    await client.call("computer/stop", { computerId });
    await eventually(stateIs("stopped"), 20_000);
    expect((await row())?.homeRevision).toBe(saved);
    expect(system.logLines.some((l) => l.includes("computer.stop_machine_gone"))).toBe(true);

    await client.call("computer/start", { computerId });
    await eventually(stateIs("running"));
    const replacement = (await row())?.providerRef as string;
    expect(replacement).not.toBe(first);
    const read = (path: string) => client.call("computer/files/read", { computerId, path });
    expect(await read("kept.txt")).toMatchObject({ text: "saved before the loss\n", source: "live" });
    await expect(read("lost.txt")).rejects.toMatchObject({ code: "FILE_NOT_FOUND" });
  });
});
