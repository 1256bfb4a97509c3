import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { apiTokens, builtOnce, newId } from "@rakazo/db";
import { and, eq, isNull, sql } from "drizzle-orm";
import type { Caller, ServiceContext } from "../context.ts";
import { AppError } from "../errors.ts";

const TOKEN_PREFIX = "rkz_";
const TOKEN_SHAPE = /^rkz_[A-Za-z0-9]{43}$/;

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
  input: { userId: string; name: string },
): Promise<{ id: string; secret: string }> {
  const secret = generateTokenSecret();
  const id = newId("token");
  await ctx.db
    .insert(apiTokens)
    .values({ id, userId: input.userId, name: input.name, secretHash: hashTokenSecret(secret) });
  return { id, secret };
}

/**
 * Resolves a bearer secret to its user. The lookup is by hash (an index hit that reveals
 * nothing about the secret); the stored hash is then compared in constant time.
 */
// Every authenticated request runs this: built once per database handle.
const tokenByHash = builtOnce((db) =>
  db
    .select({ id: apiTokens.id, userId: apiTokens.userId, secretHash: apiTokens.secretHash })
    .from(apiTokens)
    .where(and(eq(apiTokens.secretHash, sql.placeholder("hash")), isNull(apiTokens.revokedAt)))
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
  return { userId: row.userId, tokenId: row.id };
}

/** A further token for the calling user (e.g. one per script); the secret is shown once. */
export async function createApiToken(
  ctx: Pick<ServiceContext, "db">,
  caller: Caller,
  input: { name: string },
): Promise<{ id: string; token: string }> {
  const issued = await issueToken(ctx, { userId: caller.userId, name: input.name });
  return { id: issued.id, token: issued.secret };
}

/** Revokes the calling token (the web app's sign-out): every later call with it is refused. */
export async function revokeCallerToken(
  ctx: Pick<ServiceContext, "db">,
  caller: Caller,
): Promise<{ revoked: true; tokenId: string }> {
  await ctx.db
    .update(apiTokens)
    .set({ revokedAt: new Date() })
    .where(and(eq(apiTokens.id, caller.tokenId), eq(apiTokens.userId, caller.userId)));
  return { revoked: true, tokenId: caller.tokenId };
}
