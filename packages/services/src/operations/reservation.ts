/**
 * The computer-wide reservation of update and recovery (OPS-1): from the commit of its operation
 * until it succeeds, fails or is released, no new execution lease, stop, start, takeover or idle
 * suspension is accepted for the computer (each refused with OPERATION_IN_PROGRESS). A unique
 * partial index (`computer_operations_reservation_uq`) keeps it to one per computer; an
 * interrupted one still holds (OPS-5).
 */
import { sql } from "drizzle-orm";
import type { ServiceContext } from "../context.ts";
import { AppError } from "../errors.ts";

export const RESERVING_KINDS = ["update", "recover"] as const;

/** SQL: a reservation holds for `computerIdColumn` (for queries such as the idle sweep). */
export const reservationHolds = (computerIdColumn: ReturnType<typeof sql>) => sql`exists (
  select 1 from computer_operations ro
  where ro.computer_id = ${computerIdColumn}
    and ro.kind in ('update', 'recover') and ro.status in ('queued', 'running', 'interrupted'))`;

export async function assertNotReserved(ctx: Pick<ServiceContext, "db">, computerId: string): Promise<void> {
  const rows = await ctx.db.execute<{ id: string; kind: string; stage: string }>(sql`
    select id, kind, stage from computer_operations
    where computer_id = ${computerId}
      and kind in ('update', 'recover') and status in ('queued', 'running', 'interrupted')
    limit 1`);
  const held = rows[0];
  if (held) {
    throw new AppError(
      "OPERATION_IN_PROGRESS",
      `the computer is reserved by its ${held.kind} (${held.stage})`,
      {
        operationId: held.id,
        kind: held.kind,
        stage: held.stage,
      },
    );
  }
}
