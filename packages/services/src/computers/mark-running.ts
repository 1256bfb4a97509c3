import { computers } from "@rakazo/db";
import { and, eq, sql } from "drizzle-orm";
import type { ServiceContext } from "../context.ts";

/**
 * Records a freshly provisioned machine as the computer's own, only if the computer is still
 * `provisioning` (a delete or another operation may have moved it on meanwhile). Coming up is
 * activity: the idle timer starts now, not at the last use before a stop. False means the
 * caller must destroy `ref`, so no machine is orphaned.
 */
export async function markRunningIfProvisioning(
  ctx: Pick<ServiceContext, "db" | "provider">,
  computerId: string,
  ref: string,
): Promise<boolean> {
  const [updated] = await ctx.db
    .update(computers)
    .set({
      providerKind: ctx.provider.kind,
      providerRef: ref,
      state: "running",
      lastError: null,
      lastActivityAt: sql`now()`,
    })
    .where(and(eq(computers.id, computerId), eq(computers.state, "provisioning")))
    .returning({ id: computers.id });
  return updated !== undefined;
}
