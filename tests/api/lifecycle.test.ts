// The computer lifecycle through real pg-boss jobs and real Postgres, on the fake provider.
import { computerOperations } from "@rakazo/db";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestSystem, eventually, type TestSystem } from "../support/system.ts";

let system: TestSystem;
let tenant: Awaited<ReturnType<TestSystem["newTenant"]>>;

beforeAll(async () => {
  system = await createTestSystem();
  tenant = await system.newTenant("carol");
});
afterAll(() => system.close());

async function stateOf(computerId: string): Promise<string> {
  return (await system.rpc("computer/get", { computerId }, tenant.token)).json.result.state;
}

async function waitForState(computerId: string, state: string): Promise<void> {
  await eventually(async () => ((await stateOf(computerId)) === state ? true : undefined));
}

describe("computer lifecycle", () => {
  it("a provision job runs through pg-boss and moves the computer to running", async () => {
    const created = await system.rpc(
      "computer/create",
      { spaceId: tenant.spaceId, name: "Lab" },
      tenant.token,
    );
    expect(created.status).toBe(200);
    const computer = created.json.result;
    expect(computer).toMatchObject({
      state: "provisioning",
      mode: "team",
      providerKind: "fake",
      name: "Lab",
    });
    expect(computer.id).toMatch(/^cmp_[a-z0-9]{20}$/);
    expect(computer).not.toHaveProperty("providerRef");

    // Nothing runs the job until a worker exists: the state is still provisioning.
    await new Promise((done) => setTimeout(done, 300));
    expect(await stateOf(computer.id)).toBe("provisioning");

    await system.startWorker();
    await waitForState(computer.id, "running");
    const [operation] = await system.ctx.db
      .select()
      .from(computerOperations)
      .where(eq(computerOperations.computerId, computer.id));
    expect(operation).toMatchObject({ kind: "provision", status: "succeeded", stage: "running" });
    expect(operation?.jobId).toBeTruthy();

    const exec = await system.rpc(
      "computer/exec",
      { computerId: computer.id, argv: ["echo", "hi"] },
      tenant.token,
    );
    expect(exec.json.result).toEqual({
      exitCode: 0,
      stdout: "hi\n",
      stderr: "",
      timedOut: false,
      truncated: false,
    });
  });

  it("stop keeps the workspace; start brings back the same machine", async () => {
    const { id } = (await system.rpc("computer/create", { spaceId: tenant.spaceId }, tenant.token)).json
      .result;
    await waitForState(id, "running");
    await system.rpc("computer/exec", { computerId: id, argv: ["mkdir", "-p", "kept"] }, tenant.token);

    const stopping = await system.rpc("computer/stop", { computerId: id }, tenant.token);
    expect(stopping.json.result.state).toBe("stopping");
    await waitForState(id, "stopped");
    const refused = await system.rpc("computer/exec", { computerId: id, argv: ["true"] }, tenant.token);
    expect(refused.json.error.code).toBe("COMPUTER_NOT_READY");

    const again = await system.rpc("computer/stop", { computerId: id }, tenant.token);
    expect(again.status).toBe(409);
    expect(again.json.error.code).toBe("CONFLICT");

    await system.rpc("computer/start", { computerId: id }, tenant.token);
    await waitForState(id, "running");
    const ls = await system.rpc("computer/exec", { computerId: id, argv: ["ls"] }, tenant.token);
    expect(ls.json.result.stdout).toBe("kept\n");
  });

  it("delete destroys the machine and hides the computer", async () => {
    const { id } = (await system.rpc("computer/create", { spaceId: tenant.spaceId }, tenant.token)).json
      .result;
    await waitForState(id, "running");
    const ref = (await system.ctx.db.query.computers.findFirst({ where: (c, { eq }) => eq(c.id, id) }))
      ?.providerRef;
    expect(ref).toBeTruthy();

    const deleting = await system.rpc("computer/delete", { computerId: id }, tenant.token);
    expect(deleting.json.result.state).toBe("deleting");
    await eventually(async () => {
      const res = await system.rpc("computer/get", { computerId: id }, tenant.token);
      return res.status === 404 ? true : undefined;
    });
    expect(await system.provider.status(ref as string)).toBe("missing");
    const list = await system.rpc("computer/list", { spaceId: tenant.spaceId }, tenant.token);
    expect(list.json.result.map((c: { id: string }) => c.id)).not.toContain(id);

    // Deleting again is idempotent for its own space: success, still deleted, no new operation.
    const again = await system.rpc("computer/delete", { computerId: id }, tenant.token);
    expect(again.status).toBe(200);
    expect(again.json.result).toMatchObject({ id, state: "deleted" });
    const ops = await system.ctx.db
      .select()
      .from(computerOperations)
      .where(eq(computerOperations.computerId, id));
    expect(ops.filter((o) => o.kind === "delete")).toHaveLength(1);
    // Another space's caller and a never-existing id still get NOT_FOUND (no existence oracle).
    const stranger = await system.newTenant("mallory-delete");
    const foreign = await system.rpc("computer/delete", { computerId: id }, stranger.token);
    expect(foreign.status).toBe(404);
    expect(foreign.json.error.code).toBe("NOT_FOUND");
    const missing = await system.rpc(
      "computer/delete",
      { computerId: "cmp_00000000000000000000" },
      tenant.token,
    );
    expect(missing.json.error.code).toBe("NOT_FOUND");
  });

  it("a computer deleted while its provision job is queued leaves no machine behind", async () => {
    const { id } = (await system.rpc("computer/create", { spaceId: tenant.spaceId }, tenant.token)).json
      .result;
    await system.rpc("computer/delete", { computerId: id }, tenant.token);
    await eventually(async () => {
      const row = await system.ctx.db.query.computers.findFirst({ where: (c, { eq }) => eq(c.id, id) });
      return row?.state === "deleted" ? row : undefined;
    });
    const ops = await eventually(async () => {
      const rows = await system.ctx.db
        .select()
        .from(computerOperations)
        .where(eq(computerOperations.computerId, id));
      return rows.every((r) => r.status === "succeeded" || r.status === "failed") ? rows : undefined;
    });
    expect(ops.map((o) => o.kind).sort()).toEqual(["delete", "provision"]);
    const row = await system.ctx.db.query.computers.findFirst({ where: (c, { eq }) => eq(c.id, id) });
    expect(row?.providerRef).toBeNull();
  });
});
