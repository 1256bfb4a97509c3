/**
 * A bot's mutation policy (BRW-8), stored with the bot (`bot_mutation_policies`, one row per
 * bot; none: every mutation allowed and no guard decision made). Any member of the bot's space
 * reads and sets it; a bot of another space answers NOT_FOUND like a missing one.
 */
import { botMutationPolicies, bots, type MutationPolicy, type SpaceRole } from "@rakazo/db";
import { eq } from "drizzle-orm";
import type { Caller, ServiceContext } from "../../context.ts";
import { AppError } from "../../errors.ts";
import { requireMembership } from "../../identity/spaces.ts";
import { normalizeMutationPolicy } from "./policy.ts";

/** The roles that may change a bot's policy (a read-only role, should one exist, may not). */
const POLICY_EDITORS: readonly SpaceRole[] = ["owner", "member"];

export interface BotPolicyView {
  readonly botId: string;
  readonly policy: MutationPolicy;
  /** False while the bot has no stored policy (everything allowed, nothing recorded by the guard). */
  readonly stored: boolean;
  readonly updatedAt: Date | null;
}

async function requireBotOfCaller(
  ctx: Pick<ServiceContext, "db">,
  caller: Caller,
  botId: string,
): Promise<SpaceRole> {
  const [bot] = await ctx.db.select({ spaceId: bots.spaceId }).from(bots).where(eq(bots.id, botId)).limit(1);
  if (!bot) throw new AppError("NOT_FOUND", "bot not found");
  return requireMembership(ctx, caller, bot.spaceId).catch(() => {
    throw new AppError("NOT_FOUND", "bot not found");
  });
}

/** The bot's stored policy, or undefined (no guard). */
export async function storedBotPolicy(
  ctx: Pick<ServiceContext, "db">,
  botId: string,
): Promise<MutationPolicy | undefined> {
  const [row] = await ctx.db
    .select({ policy: botMutationPolicies.policy })
    .from(botMutationPolicies)
    .where(eq(botMutationPolicies.botId, botId))
    .limit(1);
  return row?.policy;
}

export async function getBotPolicy(
  ctx: ServiceContext,
  caller: Caller,
  input: { botId: string },
): Promise<BotPolicyView> {
  await requireBotOfCaller(ctx, caller, input.botId);
  const [row] = await ctx.db
    .select()
    .from(botMutationPolicies)
    .where(eq(botMutationPolicies.botId, input.botId))
    .limit(1);
  return row
    ? { botId: input.botId, policy: row.policy, stored: true, updatedAt: row.updatedAt }
    : { botId: input.botId, policy: { mode: "allow" }, stored: false, updatedAt: null };
}

/** Stores the policy; it applies from the bot's next mutating tool call, in a running run too. */
export async function setBotPolicy(
  ctx: ServiceContext,
  caller: Caller,
  input: { botId: string; policy: MutationPolicy },
): Promise<BotPolicyView> {
  const role = await requireBotOfCaller(ctx, caller, input.botId);
  if (!POLICY_EDITORS.includes(role))
    throw new AppError("FORBIDDEN", "your role cannot change a bot's policy");
  const policy = normalizeMutationPolicy(input.policy);
  const now = new Date();
  await ctx.db
    .insert(botMutationPolicies)
    .values({ botId: input.botId, policy, updatedBy: caller.userId, updatedAt: now })
    .onConflictDoUpdate({
      target: botMutationPolicies.botId,
      set: { policy, updatedBy: caller.userId, updatedAt: now },
    });
  ctx.log.info("bot.policy_set", { botId: input.botId, userId: caller.userId, mode: policy.mode });
  return { botId: input.botId, policy, stored: true, updatedAt: now };
}
