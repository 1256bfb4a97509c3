// Generated from the RPC contracts: for every RPC and every tenant id its input names, a
// foreign id (another tenant's running computer, its space, bot and run) is answered exactly
// like a missing one — same status, code and message — so responses are no existence oracle
// (security.md "Tokens and tenancy"). A new RPC is covered by adding its example.
import { RPC_CONTRACTS } from "@rakazo/api-contract";
import { mutationApprovals, newId, runs } from "@rakazo/db";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ExampleIds, exampleFor, MISSING_IDS, NON_TENANT_IDS } from "../support/rpc-examples.ts";
import { createTestSystem, runningComputer, type TestSystem } from "../support/system.ts";

let system: TestSystem;
let aliceToken: string;
let bobToken: string;
let own: ExampleIds;
let foreign: ExampleIds;

beforeAll(async () => {
  // An agent model is configured so agent/run reaches its ownership checks (no worker runs it).
  system = await createTestSystem({ agentModel: "faux:scripted-worker" });
  await system.startWorker();
  const alice = await system.newTenant("alice");
  const bob = await system.newTenant("bob");
  aliceToken = alice.token;
  bobToken = bob.token;
  const [aliceComputer, bobComputer] = await Promise.all([
    runningComputer(system, alice),
    runningComputer(system, bob),
  ]);
  const bobRun = await system
    .client(bob.token)
    .call("run/start", { computerId: bobComputer, botId: bob.botId });
  // Each tenant's own API token: a token id names a row of that person's (token/revoke).
  const tokenIdOf = async (token: string) =>
    (await system.client(token).call("token/list", {})).find((t) => t.current)?.id ?? "";
  own = {
    spaceId: alice.spaceId,
    computerId: aliceComputer,
    botId: alice.botId,
    runId: MISSING_IDS.runId,
    tokenId: await tokenIdOf(alice.token),
    // Alice herself: her space's only owner, so no example removes or demotes anyone.
    userId: alice.userId,
    inviteId: MISSING_IDS.inviteId,
    approvalId: MISSING_IDS.approvalId,
  };
  foreign = {
    spaceId: bob.spaceId,
    computerId: bobComputer,
    botId: bob.botId,
    runId: bobRun.run.id,
    tokenId: await tokenIdOf(bob.token),
    userId: bob.userId,
    inviteId: (await system.client(bob.token).call("invite/create", { spaceId: bob.spaceId })).id,
    approvalId: await pendingApproval(bobRun.run.id, bobComputer, bob.botId),
  };
}, 60_000);
afterAll(() => system.close());

/** An action of B's run waiting for B's approval (BRW-8), as the worker's guard leaves it. */
async function pendingApproval(runId: string, computerId: string, botId: string): Promise<string> {
  const id = newId("approval");
  await system.ctx.db.update(runs).set({ status: "waiting_approval" }).where(eq(runs.id, runId));
  await system.ctx.db.insert(mutationApprovals).values({
    id,
    runId,
    computerId,
    botId,
    tool: "shell",
    description: "$ rm -rf notes",
    rule: "default",
    status: "pending",
    expiresAt: new Date(Date.now() + 3_600_000),
  });
  return id;
}

const idKeys = new Set<string>([
  "spaceId",
  "computerId",
  "botId",
  "runId",
  "tokenId",
  "userId",
  "inviteId",
  "approvalId",
] satisfies (keyof ExampleIds)[]);

/** Refusals other than NOT_FOUND (still identical for foreign and missing ids), and why. */
const OTHER_REFUSALS: Readonly<Record<string, string>> = {
  // Releasing needs the caller's own control lease on that bot, which no foreign bot has.
  "computer/releaseControl botId": "NOT_IN_CONTROL",
};

/** Every (RPC, id field) pair: the example's keys ending in `Id`, minus non-tenant ids. */
const cases = RPC_CONTRACTS.filter((c) => c.auth === "token").flatMap((contract) =>
  Object.keys(exampleFor(contract.name, MISSING_IDS))
    .filter((key) => key.endsWith("Id") && !(key in NON_TENANT_IDS))
    .map((key) => [contract.name, key] as const),
);

describe("a foreign id is answered exactly like a missing one", () => {
  it("every example's id fields are ids this suite can swap", () => {
    for (const [name, key] of cases) expect(idKeys.has(key), `${name}: ${key}`).toBe(true);
  });

  it("covers every id-taking RPC, not a sample", () => {
    const covered = new Set<string>(cases.map(([name]) => name));
    for (const name of [
      "computer/observe",
      "computer/act",
      "computer/files/list",
      "computer/files/read",
      "computer/screenUrl",
      "computer/takeControl",
      "computer/activity",
      "run/get",
      "run/heartbeat",
      "agent/run",
      "run/transcript",
      "run/list",
      "run/waiting",
      "token/revoke",
      "member/list",
      "member/setRole",
      "member/remove",
      "invite/create",
      "invite/list",
      "invite/revoke",
      "bot/policy/get",
      "bot/policy/set",
      "approval/list",
      "approval/decide",
    ]) {
      expect(covered.has(name), name).toBe(true);
    }
    expect(covered.size).toBe(
      // The external surface's RPCs answer to the external token, not a user's: its own
      // isolation (one service space, computers named by key) is tests/api/external.test.ts's.
      RPC_CONTRACTS.filter((c) => c.auth !== "external").length -
        [
          "setup/bootstrap",
          "space/create",
          "space/list",
          "token/create",
          "token/list",
          // Names nothing: whether the deployment has a model (tests/agent/run-transcript.test.ts).
          "agent/status",
          // An invite code is the credential itself: no id names a row (tests/api/members.test.ts).
          "invite/accept",
          "invite/redeem",
          // Takes an operation id (`id`), refused outside the server owner's own spaces with
          // OPERATION_IN_OTHER_SPACE — a server-owner-only verb (tests/ops/interrupted.test.ts).
          "computer/releaseInterrupted",
        ].length,
    );
  });

  it.each(cases)("%s with a foreign %s is refused exactly like a missing one", async (name, key) => {
    const contract = RPC_CONTRACTS.find((c) => c.name === name);
    const field = key as keyof ExampleIds;
    const foreignInput = exampleFor(name, { ...own, [field]: foreign[field] });
    const missingInput = exampleFor(name, { ...own, [field]: MISSING_IDS[field] });
    // Both must be valid input, or the comparison would only compare two INVALID_INPUTs.
    expect(contract?.input.safeParse(foreignInput).success).toBe(true);
    expect(contract?.input.safeParse(missingInput).success).toBe(true);

    const viaForeign = await system.rpc(name, foreignInput, aliceToken);
    const viaMissing = await system.rpc(name, missingInput, aliceToken);
    expect(viaMissing.json.error?.code).toBe(OTHER_REFUSALS[`${name} ${key}`] ?? "NOT_FOUND");
    expect(viaMissing.status).toBeGreaterThanOrEqual(400);
    expect({ status: viaForeign.status, json: viaForeign.json }).toEqual({
      status: viaMissing.status,
      json: viaMissing.json,
    });
  });

  it("B's computer, run and token are untouched by A's attempts", async () => {
    const asBob = system.client(bobToken);
    expect((await asBob.call("token/list", {})).map((t) => t.id)).toContain(foreign.tokenId);
    expect((await asBob.call("computer/get", { computerId: foreign.computerId })).state).toBe("running");
    // B is still in B's space and B's invite is still open.
    const members = await asBob.call("member/list", { spaceId: foreign.spaceId });
    expect(members.members.map((m) => [m.userId, m.role])).toEqual([[foreign.userId, "owner"]]);
    const invites = await asBob.call("invite/list", { spaceId: foreign.spaceId });
    expect(invites.map((i) => i.id)).toEqual([foreign.inviteId]);
    // Still waiting for B's own decision; B's bot has no policy A set (BRW-8).
    expect((await asBob.call("run/get", { runId: foreign.runId })).status).toBe("waiting_approval");
    const waiting = await asBob.call("approval/list", { computerId: foreign.computerId });
    expect(waiting.map((a) => [a.id, a.status])).toEqual([[foreign.approvalId, "pending"]]);
    expect((await asBob.call("bot/policy/get", { botId: foreign.botId })).stored).toBe(false);
    // B's space holds its Team Computer (CMP-1) and the running one: both still there.
    const listed = await asBob.call("computer/list", { spaceId: foreign.spaceId });
    expect(listed.map((c) => c.id)).toContain(foreign.computerId);
    expect(listed).toHaveLength(2);
  });
});
