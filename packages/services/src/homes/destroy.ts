/**
 * destroyComputerHome (PER-5): crypto-shreds first (the wrapped data key is cleared, so every
 * copy of the objects, backups included, is unreadable), then deletes the objects and the local
 * home. Idempotent; the reconciler deletes whatever a crash left behind.
 */
import { computers } from "@rakazo/db";
import { eq } from "drizzle-orm";
import type { HomesContext } from "./context.ts";

export async function destroyComputerHome(
  ctx: HomesContext,
  computer: { readonly id: string; readonly homeKey: string },
): Promise<void> {
  await ctx.db.update(computers).set({ dataKeyWrapped: null }).where(eq(computers.id, computer.id));
  // The home's own disk (Docker, home-disk.ts) goes first: the store cannot delete a mount point.
  await ctx.provider.homeDisks?.remove(computer.homeKey);
  await ctx.homes.destroy(computer.homeKey);
  ctx.log.info("computer.home_destroyed", { computerId: computer.id });
}
