// Every computer RPC checks that the caller belongs to the owning space; a foreign computer
// looks exactly like a missing one (security.md: no existence oracle). Every id-taking RPC is
// covered by the generated tests/api/registry-tenancy.test.ts; these are the readable cases.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestSystem, runningComputer, type TestSystem } from "../support/system.ts";

let system: TestSystem;
let alice: Awaited<ReturnType<TestSystem["newTenant"]>>;
let bob: Awaited<ReturnType<TestSystem["newTenant"]>>;
let bobComputerId: string;

beforeAll(async () => {
  system = await createTestSystem();
  await system.startWorker();
  alice = await system.newTenant("alice");
  bob = await system.newTenant("bob");
  bobComputerId = await runningComputer(system, bob);
});
afterAll(() => system.close());

describe("a member of space A cannot reach space B's computer", () => {
  const missing = `cmp_${"z".repeat(20)}`;

  it.each([
    ["computer/get", () => ({ computerId: bobComputerId })],
    ["computer/exec", () => ({ computerId: bobComputerId, argv: ["echo", "pwned"] })],
    ["computer/delete", () => ({ computerId: bobComputerId })],
    ["computer/stop", () => ({ computerId: bobComputerId })],
  ])("%s on a foreign computer → 404 NOT_FOUND, same as a missing one", async (rpc, body) => {
    const foreign = await system.rpc(rpc, body(), alice.token);
    const absent = await system.rpc(rpc, { ...body(), computerId: missing }, alice.token);
    expect(foreign.status).toBe(404);
    expect(foreign.json).toEqual(absent.json);
  });

  it("listing another space's computers → 404; own space lists none of B's", async () => {
    expect((await system.rpc("computer/list", { spaceId: bob.spaceId }, alice.token)).status).toBe(404);
    const own = await system.rpc("computer/list", { spaceId: alice.spaceId }, alice.token);
    // Only alice's own Team Computer (CMP-1), none of bob's.
    expect(own.json.result.map((c: { spaceId: string; mode: string }) => [c.spaceId, c.mode])).toEqual([
      [alice.spaceId, "team"],
    ]);
  });

  it("creating a computer or bot in another space → 404", async () => {
    expect((await system.rpc("computer/create", { spaceId: bob.spaceId }, alice.token)).status).toBe(404);
    expect((await system.rpc("bot/create", { spaceId: bob.spaceId, name: "x" }, alice.token)).status).toBe(
      404,
    );
  });

  it("B's computer is untouched by A's attempts", async () => {
    const asBob = system.client(bob.token);
    expect((await asBob.call("computer/get", { computerId: bobComputerId })).state).toBe("running");
    const exec = await asBob.call("computer/exec", { computerId: bobComputerId, argv: ["echo", "mine"] });
    expect(exec.stdout).toBe("mine\n");
  });
});

describe("a person's tokens are their own", () => {
  it("token/list shows only the caller's tokens; another's token id is revoked like a missing one", async () => {
    const bobsTokens = await system.client(bob.token).call("token/list", {});
    const bobsToken = bobsTokens.find((t) => t.current)?.id ?? "";
    const alicesTokens = await system.client(alice.token).call("token/list", {});
    expect(alicesTokens.map((t) => t.id)).not.toContain(bobsToken);
    expect(alicesTokens.length).toBeGreaterThan(0);

    const foreign = await system.rpc("token/revoke", { tokenId: bobsToken }, alice.token);
    const absent = await system.rpc("token/revoke", { tokenId: `tok_${"z".repeat(20)}` }, alice.token);
    expect(foreign.status).toBe(404);
    expect(foreign.json).toEqual(absent.json);
    expect((await system.client(bob.token).call("space/list", {})).length).toBe(1);
  });
});
