import { bots, newId, type SpaceRole, spaceMembers, spaces } from "@rakazo/db";
import { and, asc, eq } from "drizzle-orm";
import { requireComputer } from "../computers/access.ts";
import { insertTeamComputer } from "../computers/team-computer.ts";
import type { Caller, ServiceContext } from "../context.ts";
import { AppError } from "../errors.ts";

export interface SpaceView {
  readonly id: string;
  readonly name: string;
  readonly role: SpaceRole;
}

/**
 * The caller's role in a space. A space the caller is not in answers NOT_FOUND, exactly like
 * one that does not exist (no existence oracle).
 */
export async function requireMembership(
  ctx: Pick<ServiceContext, "db">,
  caller: Caller,
  spaceId: string,
): Promise<SpaceRole> {
  const [row] = await ctx.db
    .select({ role: spaceMembers.role })
    .from(spaceMembers)
    .where(and(eq(spaceMembers.spaceId, spaceId), eq(spaceMembers.userId, caller.userId)))
    .limit(1);
  if (!row) throw new AppError("NOT_FOUND", "space not found");
  return row.role;
}

export async function createSpace(
  ctx: ServiceContext,
  caller: Caller,
  input: { name: string },
): Promise<SpaceView> {
  const id = newId("space");
  await ctx.db.transaction(async (tx) => {
    await tx.insert(spaces).values({ id, name: input.name });
    await tx.insert(spaceMembers).values({ spaceId: id, userId: caller.userId, role: "owner" });
    // CMP-1: the space's Team Computer, a row only until its first use.
    await insertTeamComputer(tx, {
      spaceId: id,
      providerKind: ctx.provider.kind,
      network: ctx.networkDefault,
    });
  });
  return { id, name: input.name, role: "owner" };
}

export async function listSpaces(ctx: ServiceContext, caller: Caller): Promise<SpaceView[]> {
  return ctx.db
    .select({ id: spaces.id, name: spaces.name, role: spaceMembers.role })
    .from(spaceMembers)
    .innerJoin(spaces, eq(spaces.id, spaceMembers.spaceId))
    .where(eq(spaceMembers.userId, caller.userId))
    .orderBy(asc(spaces.createdAt));
}

export interface BotView {
  readonly id: string;
  readonly spaceId: string;
  readonly name: string;
}

export async function createBot(
  ctx: ServiceContext,
  caller: Caller,
  input: { spaceId: string; name: string },
): Promise<BotView> {
  await requireMembership(ctx, caller, input.spaceId);
  const id = newId("bot");
  await ctx.db.insert(bots).values({ id, spaceId: input.spaceId, name: input.name });
  return { id, spaceId: input.spaceId, name: input.name };
}

/**
 * The bots of a space the caller is in, named by its id or by one of its computers (a member's
 * computer only: requireComputer answers NOT_FOUND for any other, deleted ones included).
 */
export async function listBots(
  ctx: ServiceContext,
  caller: Caller,
  input: { spaceId: string } | { computerId: string },
): Promise<BotView[]> {
  let spaceId: string;
  if ("computerId" in input) spaceId = (await requireComputer(ctx, caller, input.computerId)).spaceId;
  else {
    await requireMembership(ctx, caller, input.spaceId);
    spaceId = input.spaceId;
  }
  return ctx.db
    .select({ id: bots.id, spaceId: bots.spaceId, name: bots.name })
    .from(bots)
    .where(eq(bots.spaceId, spaceId))
    .orderBy(asc(bots.createdAt));
}

/** A bot of the given space, or NOT_FOUND. */
export async function requireBotInSpace(
  ctx: Pick<ServiceContext, "db">,
  spaceId: string,
  botId: string,
): Promise<void> {
  const [row] = await ctx.db
    .select({ id: bots.id })
    .from(bots)
    .where(and(eq(bots.id, botId), eq(bots.spaceId, spaceId)))
    .limit(1);
  if (!row) throw new AppError("NOT_FOUND", "bot not found");
}
