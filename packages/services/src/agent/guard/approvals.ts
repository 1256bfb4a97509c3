/**
 * A person's side of the mutation guard's `ask` (BRW-8): the pending actions of a computer's
 * waiting runs, and approving or denying one. A decision is one Activity line naming who made
 * it; an approval lets the waiting tool call run once, a denial fails it for the model.
 */
import { type ApprovalStatus, mutationApprovals, runs, users } from "@rakazo/db";
import { and, asc, eq, gt, sql } from "drizzle-orm";
import { recordCommandActivity } from "../../activity/record.ts";
import { requireComputer } from "../../computers/access.ts";
import type { Caller, ServiceContext } from "../../context.ts";
import { AppError } from "../../errors.ts";
import { requireMembership } from "../../identity/spaces.ts";

/** The Activity tool name of guard decisions. */
export const GUARD_TOOL = "mutation_guard";

export interface ApprovalView {
  readonly id: string;
  readonly computerId: string;
  readonly botId: string;
  readonly runId: string;
  readonly tool: string;
  /** The pending action, redacted (./describe.ts). */
  readonly description: string;
  /** The policy rule that asked: `domain example.test`, `tool browser_act`, `default`. */
  readonly rule: string;
  readonly status: ApprovalStatus;
  readonly decidedBy: string | null;
  readonly createdAt: Date;
  readonly expiresAt: Date;
}

type ApprovalRow = typeof mutationApprovals.$inferSelect;

export function toApprovalView(row: ApprovalRow): ApprovalView {
  return {
    id: row.id,
    computerId: row.computerId,
    botId: row.botId,
    runId: row.runId,
    tool: row.tool,
    description: row.description,
    rule: row.rule,
    status: row.status,
    decidedBy: row.decidedBy,
    createdAt: row.createdAt,
    expiresAt: row.expiresAt,
  };
}

/** The computer's actions waiting for a person, oldest first (only of runs still waiting). */
export async function listApprovals(
  ctx: ServiceContext,
  caller: Caller,
  input: { computerId: string },
): Promise<ApprovalView[]> {
  const computer = await requireComputer(ctx, caller, input.computerId);
  const rows = await ctx.db
    .select({ approval: mutationApprovals })
    .from(mutationApprovals)
    .innerJoin(runs, eq(runs.id, mutationApprovals.runId))
    .where(
      and(
        eq(mutationApprovals.computerId, computer.id),
        eq(mutationApprovals.status, "pending"),
        gt(mutationApprovals.expiresAt, sql`now()`),
        eq(runs.status, "waiting_approval"),
      ),
    )
    .orderBy(asc(mutationApprovals.createdAt));
  return rows.map((r) => toApprovalView(r.approval));
}

/**
 * Approves or denies a pending action. CONFLICT when it was already decided, expired, or its
 * run stopped waiting (stopped, or its worker gone): the answer says which.
 */
export async function decideApproval(
  ctx: ServiceContext,
  caller: Caller,
  input: { approvalId: string; decision: "approve" | "deny" },
): Promise<ApprovalView> {
  const notFound = () => new AppError("NOT_FOUND", "approval not found");
  const [found] = await ctx.db
    .select()
    .from(mutationApprovals)
    .where(eq(mutationApprovals.id, input.approvalId))
    .limit(1);
  if (!found) throw notFound();
  const computer = await requireComputer(ctx, caller, found.computerId).catch(() => {
    throw notFound();
  });
  // Deciding changes what the bot does: a read-only member (viewer) may not.
  if ((await requireMembership(ctx, caller, computer.spaceId)) === "viewer") {
    throw new AppError("FORBIDDEN", "a viewer of this space cannot approve or deny a bot's action");
  }
  const status: ApprovalStatus = input.decision === "approve" ? "approved" : "denied";
  const decided = await ctx.db.transaction(async (tx) => {
    const [row] = await tx
      .update(mutationApprovals)
      .set({ status, decidedBy: caller.userId, decidedAt: sql`now()` })
      .where(
        and(
          eq(mutationApprovals.id, found.id),
          eq(mutationApprovals.status, "pending"),
          gt(mutationApprovals.expiresAt, sql`now()`),
          sql`exists (select 1 from ${runs} where ${runs.id} = ${mutationApprovals.runId} and ${runs.status} = 'waiting_approval')`,
        ),
      )
      .returning();
    // The run works again: it runs the action (approved) or reads the denial (denied).
    if (row) {
      await tx
        .update(runs)
        .set({ status: "running" })
        .where(and(eq(runs.id, row.runId), eq(runs.status, "waiting_approval")));
    }
    return row;
  });
  if (!decided) {
    const [now] = await ctx.db.select().from(mutationApprovals).where(eq(mutationApprovals.id, found.id));
    const [run] = await ctx.db.select({ status: runs.status }).from(runs).where(eq(runs.id, found.runId));
    if (now?.status === "pending" && now.expiresAt > new Date() && run?.status !== "waiting_approval") {
      throw new AppError(
        "CONFLICT",
        `the run is ${run?.status ?? "gone"}, no longer waiting for this approval`,
      );
    }
    throw new AppError(
      "CONFLICT",
      `this action is already ${now?.status === "pending" ? "expired" : (now?.status ?? "gone")}`,
    );
  }
  const [person] = await ctx.db.select({ name: users.name }).from(users).where(eq(users.id, caller.userId));
  const by = person?.name ?? caller.userId;
  await recordCommandActivity(ctx, {
    computerId: decided.computerId,
    botId: decided.botId,
    runId: decided.runId,
    tool: GUARD_TOOL,
    line: `${status} by ${by}: ${decided.description}`,
    ok: status === "approved",
    ...(status === "denied" ? { error: `denied by ${by}` } : {}),
    details: { decision: status, approvalId: decided.id, tool: decided.tool, by: caller.userId },
  });
  ctx.log.info("approval.decided", { approvalId: decided.id, runId: decided.runId, status });
  return toApprovalView(decided);
}
