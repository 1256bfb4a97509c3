// A space's people through the API: one-time invites (expiring, single use, stored hashed),
// redeeming them as a new person or as someone signed in, roles (owner, member, viewer) with the
// viewer refused every call that changes something, a space's last owner kept, and the server
// owner shown and transferred. Removal is tests/api/members-removal.test.ts.
import { createHash } from "node:crypto";
import { spaceInvites } from "@rakazo/db";
import { transferServerOwner } from "@rakazo/services";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestSystem, runningComputer, type TestSystem } from "../support/system.ts";

let system: TestSystem;
let alice: Awaited<ReturnType<TestSystem["newTenant"]>>;
let aliceComputer: string;

beforeAll(async () => {
  system = await createTestSystem();
  await system.startWorker();
  alice = await system.newTenant("alice");
  aliceComputer = await runningComputer(system, alice);
});
afterAll(() => system.close());

const ok = async (name: string, body: unknown, token: string | undefined) => {
  const res = await system.rpc(name, body, token);
  expect(res.status, `${name}: ${JSON.stringify(res.json)}`).toBe(200);
  return res.json.result;
};
const refusal = async (name: string, body: unknown, token: string | undefined) => {
  const res = await system.rpc(name, body, token);
  expect(res.status, `${name}: ${JSON.stringify(res.json)}`).toBeGreaterThanOrEqual(400);
  return { status: res.status, code: res.json.error?.code as string, details: res.json.error?.details };
};
const invite = (role?: "member" | "viewer") =>
  ok("invite/create", { spaceId: alice.spaceId, ...(role ? { role } : {}) }, alice.token);

describe("invites", () => {
  it("a new person redeems a code once: they join with its role and get a token", async () => {
    const made = await invite();
    expect(made.code).toMatch(/^[0-9A-HJKMNP-TV-Z]{5}(-[0-9A-HJKMNP-TV-Z]{5}){3}$/);
    expect(made.role).toBe("member");
    // Only the hash is stored, never the code.
    const [row] = await system.ctx.db.select().from(spaceInvites).where(eq(spaceInvites.id, made.id));
    expect(JSON.stringify(row)).not.toContain(made.code);
    expect(row?.secretHash).toBe(createHash("sha256").update(made.code.replaceAll("-", "")).digest("hex"));
    expect(
      (await ok("invite/list", { spaceId: alice.spaceId }, alice.token)).map((i: { id: string }) => i.id),
    ).toContain(made.id);

    // Typed by hand: lower case, spaces instead of dashes.
    const typed = made.code.toLowerCase().replaceAll("-", " ");
    const joined = await ok("invite/redeem", { code: typed, userName: "bob" }, undefined);
    expect(joined).toMatchObject({ spaceId: alice.spaceId, spaceName: "alice's space", role: "member" });
    expect(await ok("space/list", {}, joined.token)).toEqual([
      { id: alice.spaceId, name: "alice's space", role: "member" },
    ]);
    expect((await ok("computer/get", { computerId: aliceComputer }, joined.token)).id).toBe(aliceComputer);

    const again = await refusal("invite/redeem", { code: made.code, userName: "mallory" }, undefined);
    expect([again.status, again.code]).toEqual([409, "INVITE_USED"]);
    expect(
      (await ok("invite/list", { spaceId: alice.spaceId }, alice.token)).map((i: { id: string }) => i.id),
    ).not.toContain(made.id);
    const members = await ok("member/list", { spaceId: alice.spaceId }, joined.token);
    expect(
      members.members.map((m: { name: string; role: string; you: boolean }) => [m.name, m.role, m.you]),
    ).toEqual([
      ["alice", "owner", false],
      ["bob", "member", true],
    ]);
  });

  it("two people racing with one code make one member", async () => {
    const made = await invite();
    const answers = await Promise.all(
      ["racer-1", "racer-2", "racer-3"].map((userName) =>
        system.rpc("invite/redeem", { code: made.code, userName }),
      ),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409, 409]);
    const members = await ok("member/list", { spaceId: alice.spaceId }, alice.token);
    expect(members.members.filter((m: { name: string }) => m.name.startsWith("racer-"))).toHaveLength(1);
  });

  it("an expired, revoked or unknown code is refused and joins nobody", async () => {
    const old = await invite();
    await system.ctx.db
      .update(spaceInvites)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(spaceInvites.id, old.id));
    const expired = await refusal("invite/redeem", { code: old.code, userName: "late" }, undefined);
    expect([expired.status, expired.code]).toEqual([410, "INVITE_EXPIRED"]);

    const withdrawn = await invite();
    await ok("invite/revoke", { spaceId: alice.spaceId, inviteId: withdrawn.id }, alice.token);
    expect((await refusal("invite/redeem", { code: withdrawn.code, userName: "x" }, undefined)).code).toBe(
      "INVITE_INVALID",
    );
    // Revoking twice, or someone else's: like a missing one.
    expect(
      (await refusal("invite/revoke", { spaceId: alice.spaceId, inviteId: withdrawn.id }, alice.token)).code,
    ).toBe("NOT_FOUND");
    for (const code of ["00000-00000-00000-00000", "not a code", `rkz_${"A".repeat(43)}`]) {
      const unknown = await refusal("invite/redeem", { code, userName: "guess" }, undefined);
      expect([unknown.status, unknown.code], code).toEqual([404, "INVITE_INVALID"]);
    }
    const members = await ok("member/list", { spaceId: alice.spaceId }, alice.token);
    expect(members.members.map((m: { name: string }) => m.name)).not.toContain("late");
    expect(members.members.map((m: { name: string }) => m.name)).not.toContain("guess");
  });

  it("someone signed in joins a second space with invite/accept and keeps their own", async () => {
    const carol = await system.newTenant("carol");
    const made = await invite("viewer");
    expect(await ok("invite/accept", { code: made.code }, carol.token)).toEqual({
      spaceId: alice.spaceId,
      spaceName: "alice's space",
      role: "viewer",
    });
    const spaces = await ok("space/list", {}, carol.token);
    // Oldest space first: alice's was made before carol's.
    expect(spaces.map((s: { id: string; role: string }) => [s.id, s.role])).toEqual([
      [alice.spaceId, "viewer"],
      [carol.spaceId, "owner"],
    ]);
    // Already in: refused, and the next invite stays open for someone else.
    const next = await invite();
    const twice = await refusal("invite/accept", { code: next.code }, carol.token);
    expect([twice.code, twice.details?.role]).toEqual(["ALREADY_MEMBER", "viewer"]);
    expect((await ok("invite/redeem", { code: next.code, userName: "dave" }, undefined)).role).toBe("member");
  });
});

describe("roles", () => {
  let viewer: string;
  let member: { token: string; userId: string };

  beforeAll(async () => {
    viewer = (await ok("invite/redeem", { code: (await invite("viewer")).code, userName: "vera" }, undefined))
      .token;
    const joined = await ok(
      "invite/redeem",
      { code: (await invite("member")).code, userName: "max" },
      undefined,
    );
    member = { token: joined.token, userId: joined.userId };
  });

  it("a viewer reads the space and is refused every change, in the RPC layer", async () => {
    expect((await ok("computer/list", { spaceId: alice.spaceId }, viewer)).length).toBeGreaterThan(0);
    await ok("computer/get", { computerId: aliceComputer }, viewer);
    await ok("bot/list", { spaceId: alice.spaceId }, viewer);
    await ok("member/list", { spaceId: alice.spaceId }, viewer);
    await ok("computer/files/list", { computerId: aliceComputer, path: "" }, viewer);
    await ok("computer/activity", { computerId: aliceComputer }, viewer);
    // A bot's work is readable too (the computer view's transcript, history and notices).
    await ok("run/list", { computerId: aliceComputer, botId: alice.botId }, viewer);
    await ok("run/waiting", { spaceId: alice.spaceId }, viewer);
    await ok("approval/list", { computerId: aliceComputer }, viewer);
    const changes: [string, Record<string, unknown>][] = [
      ["computer/create", { spaceId: alice.spaceId }],
      ["bot/create", { spaceId: alice.spaceId, name: "sneaky" }],
      ["computer/exec", { computerId: aliceComputer, argv: ["touch", "x"] }],
      ["computer/files/write", { computerId: aliceComputer, botId: alice.botId, path: "x.txt", text: "x" }],
      ["computer/stop", { computerId: aliceComputer }],
      ["computer/takeControl", { computerId: aliceComputer, botId: alice.botId }],
      ["computer/screenUrl", { computerId: aliceComputer, botId: alice.botId, policy: "control" }],
      ["run/start", { computerId: aliceComputer, botId: alice.botId }],
      ["invite/create", { spaceId: alice.spaceId }],
    ];
    for (const [name, body] of changes) {
      const refused = await refusal(name, body, viewer);
      expect([refused.status, refused.code, refused.details?.reason], name).toEqual([
        403,
        "FORBIDDEN",
        "viewer_read_only",
      ]);
    }
    expect((await ok("computer/get", { computerId: aliceComputer }, viewer)).state).toBe("running");
    // Not in the space: the gate passes it on and the verb answers as for anyone.
    const foreign = await refusal("computer/get", { computerId: `cmp_${"z".repeat(20)}` }, viewer);
    expect(foreign.code).toBe("NOT_FOUND");
  });

  it("a member works in the space but cannot manage its people", async () => {
    await ok("bot/create", { spaceId: alice.spaceId, name: "helper" }, member.token);
    for (const [name, body] of [
      ["invite/create", { spaceId: alice.spaceId }],
      ["invite/list", { spaceId: alice.spaceId }],
      ["member/setRole", { spaceId: alice.spaceId, userId: alice.userId, role: "viewer" }],
      ["member/remove", { spaceId: alice.spaceId, userId: alice.userId }],
    ] as const) {
      const refused = await refusal(name, body, member.token);
      expect([refused.status, refused.code], name).toEqual([403, "NOT_SPACE_OWNER"]);
    }
  });

  it("a space keeps one owner; an owner can hand ownership on", async () => {
    const last = await refusal(
      "member/setRole",
      { spaceId: alice.spaceId, userId: alice.userId, role: "member" },
      alice.token,
    );
    expect([last.status, last.code]).toEqual([409, "LAST_OWNER"]);
    expect(
      (await refusal("member/remove", { spaceId: alice.spaceId, userId: alice.userId }, alice.token)).code,
    ).toBe("LAST_OWNER");
    await ok("member/setRole", { spaceId: alice.spaceId, userId: member.userId, role: "owner" }, alice.token);
    await ok("invite/list", { spaceId: alice.spaceId }, member.token);
    await ok(
      "member/setRole",
      { spaceId: alice.spaceId, userId: member.userId, role: "member" },
      alice.token,
    );
    expect((await refusal("invite/list", { spaceId: alice.spaceId }, member.token)).code).toBe(
      "NOT_SPACE_OWNER",
    );
  });
});

describe("the server owner", () => {
  it("is the first user, shown to members, until the operator transfers it", async () => {
    const bob = await system.newTenant("bob-owner-test");
    const before = await ok("member/list", { spaceId: alice.spaceId }, alice.token);
    expect(before.serverOwner).toEqual({ userId: alice.userId, name: "alice" });
    expect(before.members.find((m: { you: boolean }) => m.you).serverOwner).toBe(true);

    const moved = await transferServerOwner(system.ctx, { user: bob.userId });
    expect([moved.from?.userId, moved.to.userId]).toEqual([alice.userId, bob.userId]);
    const after = await ok("member/list", { spaceId: alice.spaceId }, alice.token);
    expect(after.serverOwner).toEqual({ userId: bob.userId, name: "bob-owner-test" });
    expect(after.members.some((m: { serverOwner: boolean }) => m.serverOwner)).toBe(false);
    // The operator's verb takes a name too, and refuses one nobody has.
    await transferServerOwner(system.ctx, { user: "alice" });
    expect((await ok("member/list", { spaceId: alice.spaceId }, alice.token)).serverOwner.userId).toBe(
      alice.userId,
    );
    await expect(transferServerOwner(system.ctx, { user: "nobody" })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
  });
});
