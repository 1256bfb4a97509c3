/**
 * Operator verb (`./rakazo ops list`): every active operation of the installation (queued,
 * running, interrupted) and the failures of the last week, oldest first (OPS-2).
 */
import { computerOperations } from "@rakazo/db";
import { asc, sql } from "drizzle-orm";
import type { ServiceContext } from "../context.ts";
import { FAILED_OPERATIONS_SHOWN_MS } from "../operations/list.ts";
import { type OperationView, toOperationView } from "../operations/view.ts";

export async function listAllOperations(ctx: Pick<ServiceContext, "db">): Promise<OperationView[]> {
  const rows = await ctx.db
    .select()
    .from(computerOperations)
    .where(
      sql`${computerOperations.status} in ('queued', 'running', 'interrupted')
        or (${computerOperations.status} = 'failed'
            and ${computerOperations.updatedAt} > now() - ${FAILED_OPERATIONS_SHOWN_MS} * interval '1 millisecond')`,
    )
    .orderBy(asc(computerOperations.createdAt))
    .limit(500);
  return rows.map(toOperationView);
}
