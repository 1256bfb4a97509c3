/**
 * The reconciler's operation pass (OPS-4). The API commits an operation row and then enqueues its
 * job; a crash in between leaves the row `queued` with no job. Every worker replica runs this
 * pass: it claims an old queued row with a conditional update (its `heartbeat_at` is the claim,
 * so replicas do not race each other) and sends the operation's job again under the job id
 * derived from the operation. pg-boss keeps that id unique, so a job that was in fact enqueued —
 * or is already claimed by a worker — is never sent twice, and a row a worker has picked up is
 * `running`, which this pass never touches.
 */
import type { OperationKind } from "@rakazo/db";
import type { JobName } from "@rakazo/jobs";
import { sql } from "drizzle-orm";
import type { ServiceContext } from "../context.ts";
import { jobIdOf } from "./operations.ts";

const JOB_OF: Partial<Record<OperationKind, JobName>> = {
  provision: "computer.provision",
  stop: "computer.stop",
  idle_shutdown: "computer.stop",
  delete: "computer.delete",
  checkpoint: "computer.checkpoint",
  update: "computer.update",
  recover: "computer.recover",
};

export interface ReconcilePolicy {
  /** How long a queued operation may wait for its job before it is republished. */
  readonly queuedGraceMs: number;
}

/** Republishes queued operations whose enqueue was missed; returns their ids. */
export async function republishQueuedOperations(
  ctx: Pick<ServiceContext, "db" | "jobs" | "log">,
  policy: ReconcilePolicy,
): Promise<string[]> {
  const claimed = await ctx.db.execute<{ id: string; computer_id: string; kind: OperationKind }>(sql`
    update computer_operations o set heartbeat_at = now()
    where o.id in (
      select id from computer_operations
      where status = 'queued'
        and coalesce(heartbeat_at, created_at) < now() - ${policy.queuedGraceMs} * interval '1 millisecond'
      order by created_at
      limit 50
      for update skip locked)
    and o.status = 'queued'
    returning o.id, o.computer_id, o.kind`);
  const republished: string[] = [];
  for (const row of claimed) {
    const job = JOB_OF[row.kind];
    if (!job) continue;
    await ctx.jobs.send(job, { computerId: row.computer_id, operationId: row.id }, { id: jobIdOf(row.id) });
    ctx.log.info("operation.republished", { operationId: row.id, computerId: row.computer_id, job });
    republished.push(row.id);
  }
  return republished;
}

export const INTERRUPTED_ERROR =
  "the worker running this operation went silent; the computer stays reserved until a server owner confirms workers and provider calls have stopped (computer/releaseInterrupted)";

/**
 * OPS-5: a running operation whose claiming worker has not beaten for `silenceMs` becomes
 * `interrupted`. The computer keeps its transitional state — still reserved — because the
 * worker may only be partitioned and its provider calls still in flight; only an explicit
 * release by the server owner frees it (OPS-6).
 */
export async function interruptSilentOperations(
  ctx: Pick<ServiceContext, "db" | "log">,
  policy: { silenceMs: number },
): Promise<string[]> {
  const rows = await ctx.db.execute<{ id: string; computer_id: string; worker_id: string }>(sql`
    update computer_operations o
    set status = 'interrupted', error = ${INTERRUPTED_ERROR}, updated_at = now()
    where o.status = 'running'
      and o.worker_id is not null
      and not exists (
        select 1 from worker_heartbeats w
        where w.id = o.worker_id
          and w.heartbeat_at > now() - ${policy.silenceMs} * interval '1 millisecond')
    returning o.id, o.computer_id, o.worker_id`);
  for (const row of rows) {
    ctx.log.warn("operation.interrupted", {
      operationId: row.id,
      computerId: row.computer_id,
      workerId: row.worker_id,
    });
  }
  return rows.map((r) => r.id);
}

/** Records that this worker is alive (OPS-5); one row per worker process. */
export async function beatWorkerHeartbeat(ctx: Pick<ServiceContext, "db">, workerId: string): Promise<void> {
  await ctx.db.execute(sql`
    insert into worker_heartbeats (id, started_at, heartbeat_at) values (${workerId}, now(), now())
    on conflict (id) do update set heartbeat_at = now()`);
}
