/**
 * The deployment's shutdown: when its control plane stops, the computers it runs are stopped
 * cleanly, so none is left running with nothing to watch it (no idle shutdown, no reconciler)
 * and a `docker compose down -v` that drops the database leaves no orphaned machine.
 *
 * Each computer goes through the ordinary stop (`runStopJob`: desktops quiesced, workspace
 * checkpointed, machine stopped, state `stopped`), run in this process instead of through the
 * queue, which is being shut down. Then its machine is released (`provider.destroy`, ref
 * dropped): on Docker that removes the container, its egress proxy and its runtime dir, and the
 * host-address watcher goes with the data dir's last proxy. The workspace stays (the checkpoint,
 * and on Docker the home in DATA_DIR), so a later Start provisions a new machine with it.
 *
 * Stops run `concurrency` at a time; no computer is claimed after `deadline`, so the caller's
 * grace period is kept: a computer not claimed stays `running` with its machine, one whose stop
 * failed goes back to `running` (the stop job's own failure path). Either way its state matches
 * its machine, and the report names it.
 */
import { computers } from "@rakazo/db";
import { and, eq, sql } from "drizzle-orm";
import type { ServiceContext } from "../context.ts";
import { reservationHolds } from "../operations/reservation.ts";
import { runStopJob } from "./jobs.ts";
import { jobIdOf, recordOperation } from "./operations.ts";

export interface DeploymentShutdownOptions {
  /** How many computers are stopped at once. */
  readonly concurrency: number;
  /** Epoch ms after which no further computer is claimed. */
  readonly deadline: number;
}

export interface DeploymentShutdownReport {
  /** Stopped, checkpointed and released (no machine left). */
  readonly stopped: readonly string[];
  /** Stopped and checkpointed, but the machine could not be removed (stopped, not gone). */
  readonly notReleased: readonly { computerId: string; error: string }[];
  /** The stop failed; the computer is `running` again with its machine. */
  readonly failed: readonly { computerId: string; error: string }[];
  /** Not claimed before the deadline: still `running`. */
  readonly leftRunning: readonly string[];
}

interface Pending {
  readonly computerId: string;
  /** A stop already queued (by a user or the idle sweep) that no worker picked up yet. */
  readonly operationId?: string;
}

/** Running computers of this provider kind, and stops queued for computers already `stopping`. */
async function pendingComputers(ctx: ServiceContext): Promise<Pending[]> {
  const running = await ctx.db.execute<{ id: string }>(sql`
    select c.id from computers c
    where c.state = 'running' and c.provider_kind = ${ctx.provider.kind}
      and not ${reservationHolds(sql`c.id`)}
    order by c.id`);
  const queued = await ctx.db.execute<{ computer_id: string; id: string }>(sql`
    select o.computer_id, o.id from computer_operations o
    join computers c on c.id = o.computer_id
    where c.state = 'stopping' and c.provider_kind = ${ctx.provider.kind}
      and o.kind in ('stop', 'idle_shutdown') and o.status = 'queued'
    order by o.computer_id`);
  return [
    ...running.map((row) => ({ computerId: row.id })),
    ...queued.map((row) => ({ computerId: row.computer_id, operationId: row.id })),
  ];
}

/** `running → stopping` with a stop operation, conditional like a user's stop. */
async function claim(ctx: ServiceContext, computerId: string): Promise<string | undefined> {
  return ctx.db.transaction(async (tx) => {
    const [row] = await tx
      .update(computers)
      .set({ state: "stopping", lastError: null })
      .where(and(eq(computers.id, computerId), eq(computers.state, "running")))
      .returning({ id: computers.id });
    return row ? recordOperation(tx, computerId, "stop", "queued") : undefined;
  });
}

type Outcome =
  | { readonly kind: "stopped" }
  | { readonly kind: "notReleased" | "failed"; readonly error: string }
  | { readonly kind: "skipped" };

async function stopOne(ctx: ServiceContext, pending: Pending): Promise<Outcome> {
  const operationId = pending.operationId ?? (await claim(ctx, pending.computerId));
  if (!operationId) return { kind: "skipped" };
  const started = performance.now();
  // The last attempt: a failure is final here (back to `running`), nothing will retry it.
  await runStopJob(
    ctx,
    { computerId: pending.computerId, operationId },
    {
      jobId: jobIdOf(operationId),
      retryCount: 0,
      isLastAttempt: true,
      signal: new AbortController().signal,
    },
  );
  const [row] = await ctx.db.select().from(computers).where(eq(computers.id, pending.computerId)).limit(1);
  if (row?.state !== "stopped") {
    return { kind: "failed", error: row?.lastError ?? `computer is ${row?.state ?? "missing"}` };
  }
  const ref = row.providerKind === ctx.provider.kind ? row.providerRef : null;
  if (ref) {
    try {
      await ctx.provider.destroy(ref);
    } catch (error) {
      return { kind: "notReleased", error: error instanceof Error ? error.message : String(error) };
    }
    // Only the ref this stop released: a start that raced in keeps its new machine.
    await ctx.db
      .update(computers)
      .set({ providerRef: null })
      .where(and(eq(computers.id, row.id), eq(computers.state, "stopped"), eq(computers.providerRef, ref)));
  }
  ctx.log.info("computer.shutdown_stopped", {
    computerId: row.id,
    revision: row.homeRevision,
    ms: Math.round(performance.now() - started),
  });
  return { kind: "stopped" };
}

export async function stopDeploymentComputers(
  ctx: ServiceContext,
  options: DeploymentShutdownOptions,
): Promise<DeploymentShutdownReport> {
  const queue = await pendingComputers(ctx);
  const report = {
    stopped: [] as string[],
    notReleased: [] as { computerId: string; error: string }[],
    failed: [] as { computerId: string; error: string }[],
    leftRunning: [] as string[],
  };
  const lane = async (): Promise<void> => {
    for (let next = queue.shift(); next; next = queue.shift()) {
      if (Date.now() >= options.deadline) {
        report.leftRunning.push(next.computerId);
        continue;
      }
      const outcome = await stopOne(ctx, next).catch(
        (error: unknown): Outcome => ({
          kind: "failed",
          error: error instanceof Error ? error.message : String(error),
        }),
      );
      if (outcome.kind === "stopped") report.stopped.push(next.computerId);
      else if (outcome.kind !== "skipped")
        report[outcome.kind].push({ computerId: next.computerId, error: outcome.error });
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, options.concurrency) }, lane));
  return report;
}

/**
 * A stopping worker leaves the pool (its heartbeat row goes) and says how many other workers
 * are still live (a heartbeat within `freshMs`). Only the last one stops the deployment's
 * computers: scaling a replica away must not stop them. Deleting before counting means that of
 * workers stopping together at least the last to count sees none left. One that goes on to stop
 * computers beats again first, so no reconciler takes its stops for a dead worker's.
 */
export async function leaveWorkerPool(
  ctx: Pick<ServiceContext, "db">,
  workerId: string,
  options: { freshMs: number },
): Promise<number> {
  await ctx.db.execute(sql`delete from worker_heartbeats where id = ${workerId}`);
  const [row] = await ctx.db.execute<{ live: number }>(sql`
    select count(*)::int as live from worker_heartbeats
    where heartbeat_at > now() - ${options.freshMs} * interval '1 millisecond'`);
  return row?.live ?? 0;
}
