/**
 * `computer/operations` (OPS-2): a computer's active operations (queued, running, interrupted)
 * and its failures of the last week, newest first, so an app reopened later shows them again;
 * with `history`, its last 50 operations of any status (the web app's history per computer).
 */
import { computerOperations } from "@rakazo/db";
import { and, desc, eq, sql } from "drizzle-orm";
import { requireComputerEvenDeleted } from "../computers/access.ts";
import type { Caller, ServiceContext } from "../context.ts";
import { type OperationView, toOperationView } from "./view.ts";

export const FAILED_OPERATIONS_SHOWN_MS = 7 * 24 * 3_600_000;

export async function listComputerOperations(
  ctx: ServiceContext,
  caller: Caller,
  input: { computerId: string; history?: boolean | undefined },
): Promise<OperationView[]> {
  const computer = await requireComputerEvenDeleted(ctx, caller, input.computerId);
  const rows = await ctx.db
    .select()
    .from(computerOperations)
    .where(
      and(
        eq(computerOperations.computerId, computer.id),
        input.history
          ? undefined
          : sql`(${computerOperations.status} in ('queued', 'running', 'interrupted')
          or (${computerOperations.status} = 'failed'
              and ${computerOperations.updatedAt} > now() - ${FAILED_OPERATIONS_SHOWN_MS} * interval '1 millisecond'))`,
      ),
    )
    .orderBy(desc(computerOperations.createdAt))
    .limit(50);
  return rows.map(toOperationView);
}
