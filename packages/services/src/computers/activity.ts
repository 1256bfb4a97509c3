import { bots, computers } from "@rakazo/db";
import { and, eq, sql } from "drizzle-orm";
import type { ServiceContext } from "../context.ts";
import { AppError } from "../errors.ts";
import type { ComputerRow } from "./access.ts";

/** Marks the computer as used now; the idle sweeper measures from here (CMP-7). */
export async function touchComputer(ctx: Pick<ServiceContext, "db">, computerId: string): Promise<void> {
  await ctx.db.update(computers).set({ lastActivityAt: sql`now()` }).where(eq(computers.id, computerId));
}

/**
 * The bot may use this computer: it belongs to the computer's space, and a private computer
 * serves only its own bot (CMP-1). Otherwise NOT_FOUND, like a missing bot.
 */
export async function requireBotOnComputer(
  ctx: Pick<ServiceContext, "db">,
  computer: ComputerRow,
  botId: string,
): Promise<void> {
  if (computer.mode === "private" && computer.ownerBotId !== botId) {
    throw new AppError("NOT_FOUND", "bot not found on this computer");
  }
  const [row] = await ctx.db
    .select({ id: bots.id })
    .from(bots)
    .where(and(eq(bots.id, botId), eq(bots.spaceId, computer.spaceId)))
    .limit(1);
  if (!row) throw new AppError("NOT_FOUND", "bot not found on this computer");
}
