import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { type ApiTokenKind, apiTokens, builtOnce, newId } from "@rakazo/db";
import { and, desc, eq, gt, isNull, or, sql } from "drizzle-orm";
import type { Caller, ServiceContext } from "../context.ts";
import { AppError } from "../errors.ts";

const TOKEN_PREFIX = "rkz_";
const TOKEN_SHAPE = /^rkz_[A-Za-z0-9]{43}$/;
/** A web session's lifetime when its creator names none: the web app's sign-in lasts a day's work. */
const WEB_SESSION_TTL_SECONDS = 12 * 3600;
/** `last_used_at` is written when it is older than this, not on every request. */
const LAST_USED_RESOLUTION_MS = 60_000;

/** 256 random bits, base62 — shown once; only its SHA-256 is stored. */
export function generateTokenSecret(): string {
  const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  let body = "";
  // Rejection sampling keeps every character uniform (62 does not divide 256).
  while (body.length < 43) {
    for (const byte of randomBytes(64)) {
      if (byte < 248 && body.length < 43) body += alphabet[byte % 62];
    }
  }
  return `${TOKEN_PREFIX}${body}`;
}

export function hashTokenSecret(secret: string): string {
  return createHash("sha256").update(secret).digest("hex");
}

export async function issueToken(
  ctx: Pick<ServiceContext, "db">,
  input: { userId: string; name: string; kind?: ApiTokenKind; expiresAt?: Date | null },
): Promise<{ id: string; secret: string }> {
  const secret = generateTokenSecret();
  const id = newId("token");
  await ctx.db.insert(apiTokens).values({
    id,
    userId: input.userId,
    name: input.name,
    kind: input.kind ?? "api",
    secretHash: hashTokenSecret(secret),
    expiresAt: input.expiresAt ?? null,
  });
  return { id, secret };
}

/** A token that still answers: neither revoked nor past its expiry. */
const live = () =>
  and(isNull(apiTokens.revokedAt), or(isNull(apiTokens.expiresAt), gt(apiTokens.expiresAt, sql`now()`)));

/**
 * Resolves a bearer secret to its user. The lookup is by hash (an index hit that reveals
 * nothing about the secret); the stored hash is then compared in constant time.
 */
// Every authenticated request runs this: built once per database handle.
const tokenByHash = builtOnce((db) =>
  db
    .select({
      id: apiTokens.id,
      userId: apiTokens.userId,
      secretHash: apiTokens.secretHash,
      lastUsedAt: apiTokens.lastUsedAt,
      kind: apiTokens.kind,
    })
    .from(apiTokens)
    .where(and(eq(apiTokens.secretHash, sql.placeholder("hash")), live()))
    .limit(1)
    .prepare("token_by_hash"),
);

export async function authenticateToken(
  ctx: Pick<ServiceContext, "db">,
  secret: string | undefined,
): Promise<Caller> {
  if (!secret || !TOKEN_SHAPE.test(secret))
    throw new AppError("UNAUTHENTICATED", "a valid bearer token is required");
  const hash = hashTokenSecret(secret);
  const [row] = await tokenByHash(ctx.db).execute({ hash });
  if (!row || !timingSafeEqual(Buffer.from(row.secretHash, "hex"), Buffer.from(hash, "hex"))) {
    throw new AppError("UNAUTHENTICATED", "a valid bearer token is required");
  }
  if (row.lastUsedAt === null || Date.now() - row.lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS)
    await ctx.db.update(apiTokens).set({ lastUsedAt: new Date() }).where(eq(apiTokens.id, row.id));
  return { userId: row.userId, tokenId: row.id, tokenKind: row.kind };
}

/**
 * A further token for the calling user (one per script, or a web session); the secret is shown
 * once. A web session expires after `ttlSeconds`, 12 hours by default; an API token only when
 * given `ttlSeconds`.
 */
export async function createApiToken(
  ctx: Pick<ServiceContext, "db">,
  caller: Caller,
  input: { name: string; kind?: ApiTokenKind | undefined; ttlSeconds?: number | undefined },
): Promise<{ id: string; token: string; kind: ApiTokenKind; expiresAt: Date | null }> {
  const kind = input.kind ?? "api";
  const ttlSeconds = input.ttlSeconds ?? (kind === "web_session" ? WEB_SESSION_TTL_SECONDS : undefined);
  const expiresAt = ttlSeconds === undefined ? null : new Date(Date.now() + ttlSeconds * 1000);
  const issued = await issueToken(ctx, { userId: caller.userId, name: input.name, kind, expiresAt });
  return { id: issued.id, token: issued.secret, kind, expiresAt };
}

/** The calling user's live tokens, newest first; never a secret or its hash. */
export async function listApiTokens(ctx: Pick<ServiceContext, "db">, caller: Caller) {
  const rows = await ctx.db
    .select({
      id: apiTokens.id,
      name: apiTokens.name,
      kind: apiTokens.kind,
      createdAt: apiTokens.createdAt,
      lastUsedAt: apiTokens.lastUsedAt,
      expiresAt: apiTokens.expiresAt,
    })
    .from(apiTokens)
    .where(and(eq(apiTokens.userId, caller.userId), live()))
    .orderBy(desc(apiTokens.createdAt), apiTokens.id);
  return rows.map((row) => ({ ...row, current: row.id === caller.tokenId }));
}

/**
 * Revokes one of the calling user's tokens, or without `tokenId` the calling token itself (the
 * web app's sign-out); every later call with it is refused. Another user's token, a revoked or
 * an expired one answers like a missing one.
 */
export async function revokeApiToken(
  ctx: Pick<ServiceContext, "db">,
  caller: Caller,
  input: { tokenId?: string | undefined } = {},
): Promise<{ revoked: true; tokenId: string }> {
  const tokenId = input.tokenId ?? caller.tokenId;
  const revoked = await ctx.db
    .update(apiTokens)
    .set({ revokedAt: new Date() })
    .where(and(eq(apiTokens.id, tokenId), eq(apiTokens.userId, caller.userId), live()))
    .returning({ id: apiTokens.id });
  if (revoked.length === 0) throw new AppError("NOT_FOUND", "no such token");
  return { revoked: true, tokenId };
}
