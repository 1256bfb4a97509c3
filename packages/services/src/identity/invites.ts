/**
 * Invitations into a space. A space's owner makes a one-time code, shown
 * once (the web app also shows it as a link, `/invite#<code>`: a fragment never reaches a
 * server's log). Only its SHA-256 is stored, looked up by that hash and compared in constant
 * time, like API tokens. A code expires (7 days unless its maker says otherwise) and is spent
 * by its first redemption, in the same transaction that adds the member, so two people racing
 * with one code make one member. Redeeming either adds the signed-in caller (`invite/accept`)
 * or creates a new person with a first API token (`invite/redeem`, the code is the credential).
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { newId, type SpaceRole, spaceInvites, spaceMembers, spaces, users } from "@rakazo/db";
import { and, desc, eq, gt, isNull, sql } from "drizzle-orm";
import type { Caller, ServiceContext } from "../context.ts";
import { AppError } from "../errors.ts";
import { requireSpaceOwner } from "./members.ts";
import { issueToken } from "./tokens.ts";

/** Crockford's base32: no I, L, O or U, so a code read aloud or retyped survives. */
const CODE_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const CODE_LENGTH = 20;
const CODE_SHAPE = /^[0-9A-HJKMNP-TV-Z]{20}$/;
export const DEFAULT_INVITE_TTL_SECONDS = 7 * 24 * 3600;

type Db = Pick<ServiceContext, "db">;
type Tx = Parameters<Parameters<ServiceContext["db"]["transaction"]>[0]>[0];

/** 100 random bits in 20 characters, grouped by five for reading: `ABCDE-FGHJK-MNPQR-STVWX`. */
function generateInviteCode(): string {
  // 256 is a multiple of 32: every byte maps uniformly.
  const body = [...randomBytes(CODE_LENGTH)].map((byte) => CODE_ALPHABET[byte % 32]).join("");
  return body.match(/.{5}/g)?.join("-") ?? body;
}

/** What a person typed or the link carried: case, spaces and dashes do not matter. */
function normalizeCode(code: string): string | undefined {
  const plain = code.toUpperCase().replace(/[\s-]/g, "");
  return CODE_SHAPE.test(plain) ? plain : undefined;
}

const hashCode = (plain: string) => createHash("sha256").update(plain).digest("hex");

export interface InviteView {
  readonly id: string;
  readonly spaceId: string;
  readonly role: SpaceRole;
  readonly createdAt: Date;
  readonly expiresAt: Date;
}

const inviteColumns = {
  id: spaceInvites.id,
  spaceId: spaceInvites.spaceId,
  role: spaceInvites.role,
  createdAt: spaceInvites.createdAt,
  expiresAt: spaceInvites.expiresAt,
};

export async function createInvite(
  ctx: Db,
  caller: Caller,
  input: { spaceId: string; role?: "member" | "viewer" | undefined; ttlSeconds?: number | undefined },
): Promise<InviteView & { code: string }> {
  await requireSpaceOwner(ctx, caller, input.spaceId);
  const code = generateInviteCode();
  const id = newId("invite");
  const expiresAt = new Date(Date.now() + (input.ttlSeconds ?? DEFAULT_INVITE_TTL_SECONDS) * 1000);
  const [row] = await ctx.db
    .insert(spaceInvites)
    .values({
      id,
      spaceId: input.spaceId,
      role: input.role ?? "member",
      secretHash: hashCode(normalizeCode(code) ?? code),
      createdBy: caller.userId,
      expiresAt,
    })
    .returning(inviteColumns);
  if (!row) throw new AppError("INTERNAL", "the invite was not stored");
  return { ...row, code };
}

/** The space's invites still open (neither spent, revoked nor expired), newest first; never a code. */
export async function listInvites(
  ctx: Db,
  caller: Caller,
  input: { spaceId: string },
): Promise<InviteView[]> {
  await requireSpaceOwner(ctx, caller, input.spaceId);
  return ctx.db
    .select(inviteColumns)
    .from(spaceInvites)
    .where(and(eq(spaceInvites.spaceId, input.spaceId), openInvite()))
    .orderBy(desc(spaceInvites.createdAt), spaceInvites.id);
}

export async function revokeInvite(
  ctx: Db,
  caller: Caller,
  input: { spaceId: string; inviteId: string },
): Promise<{ revoked: true; inviteId: string }> {
  await requireSpaceOwner(ctx, caller, input.spaceId);
  const revoked = await ctx.db
    .update(spaceInvites)
    .set({ revokedAt: new Date() })
    .where(and(eq(spaceInvites.id, input.inviteId), eq(spaceInvites.spaceId, input.spaceId), openInvite()))
    .returning({ id: spaceInvites.id });
  if (revoked.length === 0) throw new AppError("NOT_FOUND", "no such open invite");
  return { revoked: true, inviteId: input.inviteId };
}

const openInvite = () =>
  and(
    isNull(spaceInvites.redeemedAt),
    isNull(spaceInvites.revokedAt),
    gt(spaceInvites.expiresAt, sql`now()`),
  );

export interface RedeemedInvite {
  readonly spaceId: string;
  readonly spaceName: string;
  readonly role: SpaceRole;
}

/**
 * The open invite a code names, its row locked until `tx` ends: a second redemption waits and
 * then finds it spent. An unknown or revoked code is INVITE_INVALID, a spent one INVITE_USED,
 * an old one INVITE_EXPIRED (the holder of a code may learn which).
 */
async function spend(tx: Tx, code: string): Promise<RedeemedInvite & { id: string }> {
  const plain = normalizeCode(code);
  if (!plain) throw invalid();
  const hash = hashCode(plain);
  const [row] = await tx
    .select({
      id: spaceInvites.id,
      spaceId: spaceInvites.spaceId,
      role: spaceInvites.role,
      secretHash: spaceInvites.secretHash,
      expired: sql<boolean>`${spaceInvites.expiresAt} <= now()`,
      redeemedAt: spaceInvites.redeemedAt,
      revokedAt: spaceInvites.revokedAt,
      spaceName: spaces.name,
    })
    .from(spaceInvites)
    .innerJoin(spaces, eq(spaces.id, spaceInvites.spaceId))
    .where(eq(spaceInvites.secretHash, hash))
    .limit(1)
    .for("update", { of: spaceInvites });
  if (!row || !timingSafeEqual(Buffer.from(row.secretHash, "hex"), Buffer.from(hash, "hex"))) throw invalid();
  if (row.revokedAt) throw invalid();
  if (row.redeemedAt) throw new AppError("INVITE_USED", "this invite was already used; ask for a new one");
  if (row.expired) throw new AppError("INVITE_EXPIRED", "this invite has expired; ask for a new one");
  return { id: row.id, spaceId: row.spaceId, spaceName: row.spaceName, role: row.role };
}

const invalid = () => new AppError("INVITE_INVALID", "that is not an open invite code");

async function join(tx: Tx, invite: { id: string; spaceId: string; role: SpaceRole }, userId: string) {
  await tx.insert(spaceMembers).values({ spaceId: invite.spaceId, userId, role: invite.role });
  await tx
    .update(spaceInvites)
    .set({ redeemedAt: new Date(), redeemedBy: userId })
    .where(eq(spaceInvites.id, invite.id));
}

/** `invite/accept`: the signed-in caller joins the invite's space with its role. */
export async function acceptInvite(
  ctx: Db,
  caller: Caller,
  input: { code: string },
): Promise<RedeemedInvite> {
  return ctx.db.transaction(async (tx) => {
    const invite = await spend(tx, input.code);
    const [already] = await tx
      .select({ role: spaceMembers.role })
      .from(spaceMembers)
      .where(and(eq(spaceMembers.spaceId, invite.spaceId), eq(spaceMembers.userId, caller.userId)))
      .limit(1);
    // Refused before anything is written: the code stays open for the person it was meant for.
    if (already)
      throw new AppError("ALREADY_MEMBER", "you are already a member of this space", {
        spaceId: invite.spaceId,
        role: already.role,
      });
    await join(tx, invite, caller.userId);
    return { spaceId: invite.spaceId, spaceName: invite.spaceName, role: invite.role };
  });
}

/**
 * `invite/redeem`: a new person, named `userName`, joins the invite's space and gets a first
 * API token (shown once), as setup gives the first user theirs.
 */
export async function redeemInvite(
  ctx: Db,
  input: { code: string; userName: string },
): Promise<RedeemedInvite & { userId: string; tokenId: string; token: string }> {
  return ctx.db.transaction(async (tx) => {
    const invite = await spend(tx, input.code);
    const userId = newId("user");
    await tx.insert(users).values({ id: userId, name: input.userName });
    await join(tx, invite, userId);
    const token = await issueToken({ db: tx }, { userId, name: "invite" });
    return {
      spaceId: invite.spaceId,
      spaceName: invite.spaceName,
      role: invite.role,
      userId,
      tokenId: token.id,
      token: token.secret,
    };
  });
}
