/**
 * A space's people: members with a role each — `owner` (everything,
 * including inviting, removing and changing roles), `member` (everything but those), `viewer`
 * (reads only; the API refuses a viewer's every other call: apps/api/src/rpc/roles.ts). A person
 * may be in several spaces, with a role in each.
 *
 * Removing a member takes effect at once: every access check is a membership check on each
 * call, so each of their tokens and web sessions is refused in that space from the next
 * request; their control leases in the space end and the space's gateways close their live
 * screens and terminals. A person left in no space has nothing to sign in to: their tokens and
 * sessions are revoked outright (so an open page signs out within a second).
 */
import { apiTokens, computers, controlLeases, type SpaceRole, spaceMembers, users } from "@rakazo/db";
import { and, asc, eq, inArray, isNotNull, isNull, sql } from "drizzle-orm";
import type { Caller, ServiceContext } from "../context.ts";
import { AppError } from "../errors.ts";
import { markControlled } from "../runs/control-ends.ts";
import { revokeScreenCapabilities } from "../screens/revoke.ts";
import { type ServerOwnerView, serverOwnerView } from "./server-owner.ts";
import { requireMembership } from "./spaces.ts";

type Db = Pick<ServiceContext, "db">;

/** The caller's role, which must be `owner` (a space not theirs is NOT_FOUND, as ever). */
export async function requireSpaceOwner(ctx: Db, caller: Caller, spaceId: string): Promise<void> {
  const role = await requireMembership(ctx, caller, spaceId);
  if (role !== "owner") throw new AppError("NOT_SPACE_OWNER", "only an owner of this space may do this");
}

export interface MemberView {
  readonly userId: string;
  readonly name: string;
  readonly role: SpaceRole;
  readonly joinedAt: Date;
  /** The caller. */
  readonly you: boolean;
  readonly serverOwner: boolean;
}

export async function listMembers(
  ctx: Db,
  caller: Caller,
  input: { spaceId: string },
): Promise<{ members: MemberView[]; serverOwner: ServerOwnerView | null }> {
  await requireMembership(ctx, caller, input.spaceId);
  const owner = await serverOwnerView(ctx);
  const rows = await ctx.db
    .select({ userId: users.id, name: users.name, role: spaceMembers.role, joinedAt: spaceMembers.createdAt })
    .from(spaceMembers)
    .innerJoin(users, eq(users.id, spaceMembers.userId))
    .where(eq(spaceMembers.spaceId, input.spaceId))
    .orderBy(asc(spaceMembers.createdAt), asc(users.id));
  return {
    members: rows.map((row) => ({
      ...row,
      you: row.userId === caller.userId,
      serverOwner: row.userId === owner?.userId,
    })),
    serverOwner: owner ?? null,
  };
}

type Tx = Parameters<Parameters<ServiceContext["db"]["transaction"]>[0]>[0];

/** The space's memberships, locked until the transaction ends (owner counts stay true). */
async function lockedMembers(tx: Tx, spaceId: string) {
  return tx
    .select({ userId: spaceMembers.userId, role: spaceMembers.role })
    .from(spaceMembers)
    .where(eq(spaceMembers.spaceId, spaceId))
    .for("update");
}

function lastOwner(): AppError {
  return new AppError("LAST_OWNER", "a space keeps at least one owner: make someone else owner first");
}

export async function setMemberRole(
  ctx: Db,
  caller: Caller,
  input: { spaceId: string; userId: string; role: SpaceRole },
): Promise<{ userId: string; role: SpaceRole }> {
  await requireSpaceOwner(ctx, caller, input.spaceId);
  return ctx.db.transaction(async (tx) => {
    const members = await lockedMembers(tx, input.spaceId);
    const target = members.find((m) => m.userId === input.userId);
    if (!target) throw new AppError("NOT_FOUND", "no such member");
    const owners = members.filter((m) => m.role === "owner").length;
    if (target.role === "owner" && input.role !== "owner" && owners === 1) throw lastOwner();
    await tx
      .update(spaceMembers)
      .set({ role: input.role })
      .where(and(eq(spaceMembers.spaceId, input.spaceId), eq(spaceMembers.userId, input.userId)));
    return { userId: input.userId, role: input.role };
  });
}

/**
 * Removes a member (an owner may remove anyone, anyone may remove themselves: leaving), and
 * ends what they hold in the space at once (see the module comment).
 */
export async function removeMember(
  ctx: ServiceContext,
  caller: Caller,
  input: { spaceId: string; userId: string },
): Promise<{ removed: true; userId: string; tokensRevoked: number; controlEnded: number }> {
  const role = await requireMembership(ctx, caller, input.spaceId);
  if (input.userId !== caller.userId && role !== "owner")
    throw new AppError("NOT_SPACE_OWNER", "only an owner of this space may remove others");
  const tokensRevoked = await ctx.db.transaction(async (tx) => {
    const members = await lockedMembers(tx, input.spaceId);
    const target = members.find((m) => m.userId === input.userId);
    if (!target) throw new AppError("NOT_FOUND", "no such member");
    if (target.role === "owner" && members.filter((m) => m.role === "owner").length === 1) throw lastOwner();
    await tx
      .delete(spaceMembers)
      .where(and(eq(spaceMembers.spaceId, input.spaceId), eq(spaceMembers.userId, input.userId)));
    const [elsewhere] = await tx
      .select({ spaceId: spaceMembers.spaceId })
      .from(spaceMembers)
      .where(eq(spaceMembers.userId, input.userId))
      .limit(1);
    if (elsewhere) return 0;
    const revoked = await tx
      .update(apiTokens)
      .set({ revokedAt: new Date() })
      .where(and(eq(apiTokens.userId, input.userId), isNull(apiTokens.revokedAt)))
      .returning({ id: apiTokens.id });
    return revoked.length;
  });
  const controlEnded = await endPresenceInSpace(ctx, input);
  ctx.log.info("space.member_removed", { ...input, by: caller.userId, tokensRevoked, controlEnded });
  return { removed: true, userId: input.userId, tokensRevoked, controlEnded };
}

/** Ends the person's control leases on the space's computers and closes their live screens. */
async function endPresenceInSpace(ctx: ServiceContext, input: { spaceId: string; userId: string }) {
  const spaceComputers = await ctx.db.select().from(computers).where(eq(computers.spaceId, input.spaceId));
  if (spaceComputers.length === 0) return 0;
  const ended = await ctx.db
    .update(controlLeases)
    .set({ userId: null, expiresAt: null })
    .where(
      and(
        eq(controlLeases.userId, input.userId),
        isNotNull(controlLeases.expiresAt),
        inArray(
          controlLeases.computerId,
          spaceComputers.map((c) => c.id),
        ),
        sql`${controlLeases.expiresAt} > now()`,
      ),
    )
    .returning({ computerId: controlLeases.computerId, botId: controlLeases.botId });
  const issuedAtOrBefore = Date.now();
  for (const computer of spaceComputers) {
    // Every capability minted for them (view, control, terminal): the gateway closes live ones.
    await revokeScreenCapabilities(ctx, computer, [{ subject: input.userId, issuedAtOrBefore }]).catch(
      (error: unknown) => ctx.log.warn("screen.revoke_failed", { computerId: computer.id, error }),
    );
    for (const lease of ended.filter((e) => e.computerId === computer.id))
      await markControlled(ctx, computer, lease.botId, false).catch((error: unknown) =>
        ctx.log.warn("control.unmark_failed", { computerId: computer.id, botId: lease.botId, error }),
      );
  }
  return ended.length;
}

/**
 * The caller's role in the space an RPC's input names (its `spaceId`, or the space of its
 * `computerId` or `runId`), or undefined when it names none the caller is in — the RPC's own
 * check then answers NOT_FOUND as for anyone else. Used by the API's role gate.
 */
export async function roleForNamedSpace(
  ctx: Db,
  caller: Caller,
  named: { spaceId?: unknown; computerId?: unknown; runId?: unknown },
): Promise<SpaceRole | undefined> {
  const text = (value: unknown) => (typeof value === "string" ? value : null);
  const rows = await ctx.db.execute<{ role: SpaceRole }>(sql`
    select m.role from space_members m
    where m.user_id = ${caller.userId}
      and m.space_id = coalesce(
        ${text(named.spaceId)},
        (select c.space_id from computers c where c.id = ${text(named.computerId)}),
        (select c.space_id from runs r join computers c on c.id = r.computer_id where r.id = ${text(named.runId)}))
    limit 1`);
  return rows[0]?.role;
}
