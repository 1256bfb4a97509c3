/**
 * Whole-computer idle shutdown (CMP-7): no per-desktop timers. A computer nobody used for
 * `idleTimeoutMs` is claimed (a conditional `running → stopping` update, so one of several
 * worker replicas wins) and stopped through the ordinary stop job, which keeps the workspace.
 *
 * Busy means a live execution lease held by a run that is not waiting for a human, or a live
 * control lease. A run waiting for takeover (TKO-3) keeps a computer whose provider does not
 * bill while running awake for `takeoverAwakeMs` after the request; on billed providers the
 * request only restarts the ordinary idle timer. Either way the run keeps waiting.
 */
import { computers } from "@rakazo/db";
import { and, eq, sql } from "drizzle-orm";
import type { ServiceContext } from "../context.ts";
import { reservationHolds } from "../operations/reservation.ts";
import { enqueueOperation, recordOperation } from "./operations.ts";

export interface IdlePolicy {
  readonly idleTimeoutMs: number;
  readonly takeoverAwakeMs: number;
}

export const TAKEOVER_AWAKE_MS = 30 * 60_000;

/** Computers idle past the policy, not yet claimed. */
export async function findIdleComputers(ctx: ServiceContext, policy: IdlePolicy): Promise<string[]> {
  const awake = ctx.provider.capabilities.billsWhileRunning ? 0 : policy.takeoverAwakeMs;
  const rows = await ctx.db.execute<{ id: string }>(sql`
    select c.id from computers c
    where c.state = 'running'
      and c.provider_kind = ${ctx.provider.kind}
      and c.last_activity_at < now() - ${policy.idleTimeoutMs} * interval '1 millisecond'
      and not exists (
        select 1 from execution_leases l
        left join runs r on r.id = l.holder_id
        where l.computer_id = c.id and l.holder_id is not null and l.expires_at > now()
          and (r.status is distinct from 'waiting_takeover'))
      and not ${reservationHolds(sql`c.id`)}
      and not exists (
        select 1 from control_leases cl
        where cl.computer_id = c.id and cl.user_id is not null and cl.expires_at > now())
      and not exists (
        select 1 from runs w
        where w.computer_id = c.id and w.status = 'waiting_takeover'
          and w.waiting_since > now() - ${awake} * interval '1 millisecond')
    order by c.last_activity_at
    limit 50`);
  return rows.map((r) => r.id);
}

/** Claims and stops idle computers; returns the ids this call stopped. */
export async function sweepIdleComputers(ctx: ServiceContext, policy: IdlePolicy): Promise<string[]> {
  const claimed: string[] = [];
  for (const id of await findIdleComputers(ctx, policy)) {
    const operationId = await ctx.db.transaction(async (tx) => {
      const [row] = await tx
        .update(computers)
        .set({ state: "stopping" })
        .where(and(eq(computers.id, id), eq(computers.state, "running")))
        .returning({ id: computers.id });
      return row ? recordOperation(tx, id, "idle_shutdown", "queued") : undefined;
    });
    if (!operationId) continue;
    await enqueueOperation(ctx, "computer.stop", id, operationId);
    ctx.log.info("computer.idle_shutdown", { computerId: id });
    claimed.push(id);
  }
  return claimed;
}
