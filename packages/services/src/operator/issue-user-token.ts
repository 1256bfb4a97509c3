/**
 * Operator verb (`./rakazo token create --user <name>`): a new API token for an existing user,
 * named by user name or id. The same issuing path as the API (only the SHA-256 is stored; the
 * secret is returned once). For people who lost the bootstrap token: no need to wipe DATA_DIR.
 */
import { users } from "@rakazo/db";
import { eq, or } from "drizzle-orm";
import type { ServiceContext } from "../context.ts";
import { AppError } from "../errors.ts";
import { issueToken } from "../identity/tokens.ts";

export async function issueUserToken(
  ctx: Pick<ServiceContext, "db">,
  input: { user: string; tokenName: string },
): Promise<{ userId: string; tokenId: string; token: string }> {
  const matches = await ctx.db
    .select({ id: users.id })
    .from(users)
    .where(or(eq(users.id, input.user), eq(users.name, input.user)))
    .limit(2);
  if (matches.length === 0) throw new AppError("NOT_FOUND", `no user named ${JSON.stringify(input.user)}`);
  if (matches.length > 1) {
    throw new AppError("CONFLICT", `several users are named ${JSON.stringify(input.user)}; pass the user id`);
  }
  const userId = (matches[0] as { id: string }).id;
  const issued = await issueToken(ctx, { userId, name: input.tokenName });
  return { userId, tokenId: issued.id, token: issued.secret };
}
