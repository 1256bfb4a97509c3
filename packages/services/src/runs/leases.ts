/**
 * Fenced per-bot leases (CMP-3, TKO-1). One row per (computer, bot) lives forever and its
 * `fencing_token` only grows: every acquisition bumps it, so a holder that was superseded
 * (paused, partitioned, or simply expired and replaced) carries an older token and is refused
 * at its next action — never silently obeyed.
 *
 * Acquisition is one `INSERT … ON CONFLICT DO UPDATE … WHERE free` statement: Postgres
 * serializes concurrent attempts on the row, so exactly one caller wins a free lease.
 *
 * Fencing is checked when an action starts; an action already running when its lease is
 * superseded is allowed to finish (the sandbox has no notion of tokens to refuse it midway).
 */
import { controlLeases, executionLeases } from "@rakazo/db";
import { and, eq, gt, isNotNull, sql } from "drizzle-orm";
import type { ServiceContext } from "../context.ts";
import { AppError } from "../errors.ts";
import { assertNotReserved } from "../operations/reservation.ts";

type Db = Pick<ServiceContext, "db">;

export interface Lease {
  readonly computerId: string;
  readonly botId: string;
  readonly fencingToken: number;
  readonly expiresAt: Date;
}

export const DEFAULT_EXECUTION_LEASE_MS = 60_000;
export const DEFAULT_CONTROL_LEASE_MS = 30 * 60_000;

export async function acquireExecutionLease(
  ctx: Db,
  input: { computerId: string; botId: string; holderId: string; ttlMs?: number },
): Promise<Lease> {
  // OPS-1: an update or recovery holding the computer excludes new execution leases.
  await assertNotReserved(ctx, input.computerId);
  const ttl = input.ttlMs ?? DEFAULT_EXECUTION_LEASE_MS;
  const rows = await ctx.db.execute<{ fencing_token: string; expires_at: Date }>(sql`
    insert into execution_leases (computer_id, bot_id, holder_id, fencing_token, expires_at, acquired_at)
    values (${input.computerId}, ${input.botId}, ${input.holderId}, 1,
            now() + ${ttl} * interval '1 millisecond', now())
    on conflict (computer_id, bot_id) do update
      set holder_id = excluded.holder_id,
          fencing_token = execution_leases.fencing_token + 1,
          expires_at = excluded.expires_at,
          acquired_at = now()
      where execution_leases.holder_id is null or execution_leases.expires_at <= now()
    returning fencing_token, expires_at`);
  const row = rows[0];
  if (!row) throw new AppError("LEASE_HELD", "another run is driving this bot on this computer");
  return {
    computerId: input.computerId,
    botId: input.botId,
    fencingToken: Number(row.fencing_token),
    expiresAt: new Date(row.expires_at),
  };
}

export async function renewExecutionLease(
  ctx: Db,
  input: { computerId: string; botId: string; fencingToken: number; ttlMs?: number },
): Promise<Lease> {
  const ttl = input.ttlMs ?? DEFAULT_EXECUTION_LEASE_MS;
  const [row] = await ctx.db
    .update(executionLeases)
    .set({ expiresAt: sql`now() + ${ttl} * interval '1 millisecond'` })
    .where(and(liveExecution(input), eq(executionLeases.fencingToken, input.fencingToken)))
    .returning({ expiresAt: executionLeases.expiresAt });
  if (!row?.expiresAt) throw staleLease();
  return { ...input, expiresAt: row.expiresAt };
}

/** Gives the lease up. A stale token releases nothing (the newer holder keeps its lease). */
export async function releaseExecutionLease(
  ctx: Db,
  input: { computerId: string; botId: string; fencingToken: number },
): Promise<void> {
  await ctx.db
    .update(executionLeases)
    .set({ holderId: null, expiresAt: null })
    .where(
      and(
        eq(executionLeases.computerId, input.computerId),
        eq(executionLeases.botId, input.botId),
        eq(executionLeases.fencingToken, input.fencingToken),
      ),
    );
}

/** Ends whatever execution lease the bot holds (stopBot). The token is not reused. */
export async function revokeExecutionLease(
  ctx: Db,
  input: { computerId: string; botId: string },
): Promise<void> {
  await ctx.db
    .update(executionLeases)
    .set({ holderId: null, expiresAt: null })
    .where(and(eq(executionLeases.computerId, input.computerId), eq(executionLeases.botId, input.botId)));
}

/** Refuses with STALE_LEASE unless `fencingToken` is the bot's live lease. */
export async function assertFence(
  ctx: Db,
  input: { computerId: string; botId: string; fencingToken: number },
): Promise<void> {
  const [row] = await ctx.db
    .select({ token: executionLeases.fencingToken })
    .from(executionLeases)
    .where(and(liveExecution(input), eq(executionLeases.fencingToken, input.fencingToken)))
    .limit(1);
  if (!row) throw staleLease();
}

/** The bot's live execution lease, if any. */
export async function liveExecutionLease(
  ctx: Db,
  input: { computerId: string; botId: string },
): Promise<{ holderId: string; fencingToken: number } | undefined> {
  const [row] = await ctx.db
    .select({ holderId: executionLeases.holderId, fencingToken: executionLeases.fencingToken })
    .from(executionLeases)
    .where(liveExecution(input))
    .limit(1);
  return row?.holderId ? { holderId: row.holderId, fencingToken: row.fencingToken } : undefined;
}

function liveExecution(input: { computerId: string; botId: string }) {
  return and(
    eq(executionLeases.computerId, input.computerId),
    eq(executionLeases.botId, input.botId),
    isNotNull(executionLeases.holderId),
    gt(executionLeases.expiresAt, sql`now()`),
  );
}

function staleLease(): AppError {
  return new AppError("STALE_LEASE", "this lease was superseded or has expired; the action was refused");
}

// ---------------------------------------------------------------- control (TKO-1)

export async function acquireControlLease(
  ctx: Db,
  input: { computerId: string; botId: string; userId: string; ttlMs?: number },
): Promise<Lease> {
  const ttl = input.ttlMs ?? DEFAULT_CONTROL_LEASE_MS;
  const rows = await ctx.db.execute<{ fencing_token: string; expires_at: Date }>(sql`
    insert into control_leases (computer_id, bot_id, user_id, fencing_token, expires_at, acquired_at)
    values (${input.computerId}, ${input.botId}, ${input.userId}, 1,
            now() + ${ttl} * interval '1 millisecond', now())
    on conflict (computer_id, bot_id) do update
      set user_id = excluded.user_id,
          fencing_token = control_leases.fencing_token + 1,
          expires_at = excluded.expires_at,
          acquired_at = now()
      where control_leases.user_id is null
         or control_leases.expires_at <= now()
         or control_leases.user_id = excluded.user_id
    returning fencing_token, expires_at`);
  const row = rows[0];
  if (!row) throw new AppError("CONTROL_HELD", "another person is controlling this screen");
  return {
    computerId: input.computerId,
    botId: input.botId,
    fencingToken: Number(row.fencing_token),
    expiresAt: new Date(row.expires_at),
  };
}

/** Releases the caller's control; false when they did not hold it. */
export async function releaseControlLease(
  ctx: Db,
  input: { computerId: string; botId: string; userId: string },
): Promise<boolean> {
  const rows = await ctx.db
    .update(controlLeases)
    .set({ userId: null, expiresAt: null })
    .where(
      and(
        eq(controlLeases.computerId, input.computerId),
        eq(controlLeases.botId, input.botId),
        eq(controlLeases.userId, input.userId),
      ),
    )
    .returning({ botId: controlLeases.botId });
  return rows.length > 0;
}

/**
 * Ends whoever's control lease the bot has, because a run was granted its execution lease: one
 * driver at a time (CMP-3, TKO-1). True when someone held it.
 */
export async function endControlLease(
  ctx: Db,
  input: { computerId: string; botId: string },
): Promise<boolean> {
  const rows = await ctx.db
    .update(controlLeases)
    .set({ userId: null, expiresAt: null })
    .where(
      and(
        eq(controlLeases.computerId, input.computerId),
        eq(controlLeases.botId, input.botId),
        isNotNull(controlLeases.userId),
        gt(controlLeases.expiresAt, sql`now()`),
      ),
    )
    .returning({ botId: controlLeases.botId });
  return rows.length > 0;
}

export async function liveControlLease(
  ctx: Db,
  input: { computerId: string; botId: string },
): Promise<{ userId: string; fencingToken: number; expiresAt: Date } | undefined> {
  const [row] = await ctx.db
    .select({
      userId: controlLeases.userId,
      fencingToken: controlLeases.fencingToken,
      expiresAt: controlLeases.expiresAt,
    })
    .from(controlLeases)
    .where(
      and(
        eq(controlLeases.computerId, input.computerId),
        eq(controlLeases.botId, input.botId),
        isNotNull(controlLeases.userId),
        gt(controlLeases.expiresAt, sql`now()`),
      ),
    )
    .limit(1);
  return row?.userId && row.expiresAt
    ? { userId: row.userId, fencingToken: row.fencingToken, expiresAt: row.expiresAt }
    : undefined;
}
