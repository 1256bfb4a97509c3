// Removing a member ends what they hold in that space at once — every token and web
// session of theirs is refused there from the next call, their control leases on the space's
// computers end and the gateways refuse the screen capabilities minted for them. A person left
// in no space has all their tokens and sessions revoked; one with another space keeps it.
import { authorizeScreen, liveControlLease } from "@rakazo/services";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestSystem, runningComputer, type TestSystem } from "../support/system.ts";

let system: TestSystem;
let alice: Awaited<ReturnType<TestSystem["newTenant"]>>;
let computerId: string;

beforeAll(async () => {
  system = await createTestSystem({ screens: true });
  await system.startWorker();
  alice = await system.newTenant("alice");
  computerId = await runningComputer(system, alice);
}, 60_000);
afterAll(() => system.close());

const ok = async (name: string, body: unknown, token: string | undefined) => {
  const res = await system.rpc(name, body, token);
  expect(res.status, `${name}: ${JSON.stringify(res.json)}`).toBe(200);
  return res.json.result;
};
const codeOf = async (name: string, body: unknown, token: string) =>
  (await system.rpc(name, body, token)).json.error?.code as string | undefined;

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** Reads a stream to its end. */
async function drain(response: Response): Promise<"ended"> {
  const reader = response.body?.getReader();
  while (reader && !(await reader.read()).done) {
    // Events and pings until the server ends it.
  }
  return "ended";
}

/** A person joined through an invite; `existing` joins with their own token instead. */
async function join(role: "member" | "viewer", existing?: { token: string; userId: string }) {
  const { code } = await ok("invite/create", { spaceId: alice.spaceId, role }, alice.token);
  if (existing) {
    await ok("invite/accept", { code }, existing.token);
    return existing;
  }
  const joined = await ok("invite/redeem", { code, userName: `p-${code.slice(0, 5)}` }, undefined);
  return { token: joined.token as string, userId: joined.userId as string };
}

/** The person's own bot on the space's computer, taken over, with a view capability minted. */
async function holdScreen(person: { token: string }) {
  const bot = await ok("bot/create", { spaceId: alice.spaceId, name: "b" }, person.token);
  await ok("computer/takeControl", { computerId, botId: bot.id }, person.token);
  const screen = await ok("computer/screenUrl", { computerId, botId: bot.id, policy: "view" }, person.token);
  const capability = new URL(screen.url).pathname.split("/")[2] as string;
  await authorizeScreen(system.ctx, { capability });
  return { botId: bot.id as string, capability };
}

describe("removing a member", () => {
  it("someone only in this space: every token and session revoked, control and screens ended", async () => {
    const bob = await join("member");
    const session = await ok("token/create", { name: "web session", kind: "web_session" }, bob.token);
    const held = await holdScreen(bob);
    expect((await liveControlLease(system.ctx, { computerId, botId: held.botId }))?.userId).toBe(bob.userId);

    const removed = await ok("member/remove", { spaceId: alice.spaceId, userId: bob.userId }, alice.token);
    expect(removed).toEqual({ removed: true, userId: bob.userId, tokensRevoked: 2, controlEnded: 1 });

    for (const token of [bob.token, session.token]) {
      const res = await system.rpc("space/list", {}, token);
      expect([res.status, res.json.error?.code]).toEqual([401, "UNAUTHENTICATED"]);
    }
    expect(await liveControlLease(system.ctx, { computerId, botId: held.botId })).toBeUndefined();
    await expect(authorizeScreen(system.ctx, { capability: held.capability })).rejects.toMatchObject({
      code: "FORBIDDEN",
      details: { reason: "revoked" },
    });
    const members = await ok("member/list", { spaceId: alice.spaceId }, alice.token);
    expect(members.members.map((m: { userId: string }) => m.userId)).not.toContain(bob.userId);
  });

  it("someone with another space: refused in this one at once, their own untouched", async () => {
    const carol = await system.newTenant("carol");
    await join("member", carol);
    const held = await holdScreen(carol);
    await ok("computer/get", { computerId }, carol.token);
    const stream = await system.app.request(`/activity/stream?computerId=${computerId}`, {
      headers: { authorization: `Bearer ${carol.token}` },
    });
    expect(stream.status).toBe(200);
    const ended = drain(stream);

    const removed = await ok("member/remove", { spaceId: alice.spaceId, userId: carol.userId }, alice.token);
    expect([removed.tokensRevoked, removed.controlEnded]).toEqual([0, 1]);
    expect(await codeOf("computer/get", { computerId }, carol.token)).toBe("NOT_FOUND");
    expect(await codeOf("computer/list", { spaceId: alice.spaceId }, carol.token)).toBe("NOT_FOUND");
    expect(await codeOf("computer/releaseControl", { computerId, botId: held.botId }, carol.token)).toBe(
      "NOT_FOUND",
    );
    expect(await liveControlLease(system.ctx, { computerId, botId: held.botId })).toBeUndefined();
    await expect(authorizeScreen(system.ctx, { capability: held.capability })).rejects.toMatchObject({
      details: { reason: "revoked" },
    });
    // Her open activity stream of that computer ends too (it checks again every second).
    expect(await Promise.race([ended, sleep(5_000).then(() => "still open")])).toBe("ended");
    expect((await ok("space/list", {}, carol.token)).map((s: { id: string }) => s.id)).toEqual([
      carol.spaceId,
    ]);
    await ok("computer/list", { spaceId: carol.spaceId }, carol.token);
  });

  it("anyone may leave; nobody but an owner removes others; a stranger's id is NOT_FOUND", async () => {
    const dave = await join("viewer");
    const erin = await join("member");
    expect(await codeOf("member/remove", { spaceId: alice.spaceId, userId: dave.userId }, erin.token)).toBe(
      "NOT_SPACE_OWNER",
    );
    await ok("member/remove", { spaceId: alice.spaceId, userId: dave.userId }, dave.token);
    expect((await system.rpc("space/list", {}, dave.token)).status).toBe(401);
    expect(await codeOf("member/remove", { spaceId: alice.spaceId, userId: dave.userId }, alice.token)).toBe(
      "NOT_FOUND",
    );
    // Alice's control of her own bot survives others' removal.
    await ok("computer/takeControl", { computerId, botId: alice.botId }, alice.token);
    await ok("member/remove", { spaceId: alice.spaceId, userId: erin.userId }, alice.token);
    expect((await liveControlLease(system.ctx, { computerId, botId: alice.botId }))?.userId).toBe(
      alice.userId,
    );
    await ok("computer/releaseControl", { computerId, botId: alice.botId }, alice.token);
  });
});
