/**
 * The mutation guard (BRW-8): the `beforeMutation` hook every mutating agent tool calls
 * (computer-tools' `mutate`), for shell, files, apps, desktop and browser actions alike. It reads
 * the bot's policy at each call (a change applies to a running run's next action) and:
 * - `allow`: the call runs;
 * - `deny`: the call is refused before anything runs; the model reads why as a tool error;
 * - `ask`: the run waits in `waiting_approval` with the action's redacted description until a
 *   member decides (./approvals.ts), the approval expires (`timeoutMs`, then it counts as
 *   denied), or the run stops waiting (stopped, lease lost). Approved, the call runs once.
 * A bot without a stored policy makes no decision; with one, every decision is one Activity line
 * (a person's approval or denial is recorded by ./approvals.ts, with their name).
 */
import { mutationApprovals, newId, runs } from "@rakazo/db";
import { and, eq, sql } from "drizzle-orm";
import { recordCommandActivity } from "../../activity/record.ts";
import type { ServiceContext } from "../../context.ts";
import type { AgentMutation, AgentMutationHooks } from "../hooks.ts";
import { GUARD_TOOL } from "./approvals.ts";
import { storedBotPolicy } from "./bot-policy.ts";
import { describeMutation } from "./describe.ts";
import { decide } from "./policy.ts";

/** How long an asked action waits for a person before it counts as denied. */
export const DEFAULT_APPROVAL_TIMEOUT_MS = 10 * 60_000;

export interface GuardOptions {
  /** The run's host gave up (lease lost, shutdown): a waiting call stops waiting. */
  readonly signal?: AbortSignal;
  readonly timeoutMs?: number;
  /** How often a waiting call checks for the decision (default 1 s). */
  readonly pollMs?: number;
}

/** What the model reads when the guard refuses a call; nothing of it ran. */
export class MutationRefused extends Error {
  override readonly name = "MutationRefused";
}

const NOTHING_RAN =
  "Nothing was done. Do not repeat this action; continue another way, or finish and say what you could not do.";

export function createMutationGuard(
  ctx: ServiceContext,
  options: GuardOptions = {},
): Required<Pick<AgentMutationHooks, "beforeMutation">> {
  return {
    async beforeMutation(mutation) {
      const policy = await storedBotPolicy(ctx, mutation.botId);
      if (!policy) return;
      const { mode, rule } = decide(policy, mutation.tool, mutation.args);
      const description = describeMutation(mutation.tool, mutation.args);
      const record = (line: string, ok: boolean, details: Record<string, unknown>, error?: string) =>
        recordCommandActivity(ctx, {
          computerId: mutation.computerId,
          botId: mutation.botId,
          runId: mutation.runId,
          tool: GUARD_TOOL,
          line,
          ok,
          ...(error ? { error } : {}),
          details: { tool: mutation.tool, rule, ...details },
        });
      if (mode === "allow") {
        await record(`allowed by rule ${rule}: ${description}`, true, { decision: "allowed" });
        return;
      }
      if (mode === "deny") {
        const reason = `denied by the bot's policy (rule ${rule})`;
        await record(`${reason}: ${description}`, false, { decision: "denied" }, reason);
        throw new MutationRefused(`This action was refused: ${reason}. ${NOTHING_RAN}`);
      }
      await askAndWait(ctx, mutation, { rule, description, record }, options);
    },
  };
}

type Recorder = (
  line: string,
  ok: boolean,
  details: Record<string, unknown>,
  error?: string,
) => Promise<unknown>;

async function askAndWait(
  ctx: ServiceContext,
  mutation: AgentMutation,
  asked: { rule: string; description: string; record: Recorder },
  options: GuardOptions,
): Promise<void> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_APPROVAL_TIMEOUT_MS;
  const id = newId("approval");
  const waiting = await ctx.db.transaction(async (tx) => {
    const [run] = await tx
      .update(runs)
      .set({ status: "waiting_approval" })
      .where(and(eq(runs.id, mutation.runId), eq(runs.status, "running")))
      .returning({ id: runs.id });
    if (!run) return false;
    await tx.insert(mutationApprovals).values({
      id,
      runId: mutation.runId,
      computerId: mutation.computerId,
      botId: mutation.botId,
      tool: mutation.tool,
      description: asked.description,
      rule: asked.rule,
      status: "pending",
      expiresAt: new Date(Date.now() + timeoutMs),
    });
    return true;
  });
  if (!waiting)
    throw new MutationRefused(`This action was not run: the run is no longer running. ${NOTHING_RAN}`);
  await asked.record(`asked a person (rule ${asked.rule}): ${asked.description}`, true, {
    decision: "asked",
    approvalId: id,
  });
  ctx.log.info("approval.asked", { approvalId: id, runId: mutation.runId, tool: mutation.tool });
  const pollMs = options.pollMs ?? 1_000;
  for (;;) {
    const [row] = await ctx.db.select().from(mutationApprovals).where(eq(mutationApprovals.id, id)).limit(1);
    if (row?.status === "approved") return;
    if (row?.status === "denied") {
      throw new MutationRefused(`A person denied this action (${asked.description}). ${NOTHING_RAN}`);
    }
    const [run] = await ctx.db.select({ status: runs.status }).from(runs).where(eq(runs.id, mutation.runId));
    if (options.signal?.aborted || run?.status !== "waiting_approval") {
      if (await settle(ctx, id, "canceled"))
        throw new MutationRefused(`This action was not run: the run stopped waiting. ${NOTHING_RAN}`);
      continue; // a person decided in between: the next look reads it
    }
    if (row && row.expiresAt.getTime() <= Date.now() && (await settle(ctx, id, "expired"))) {
      await ctx.db
        .update(runs)
        .set({ status: "running" })
        .where(and(eq(runs.id, mutation.runId), eq(runs.status, "waiting_approval")));
      const minutes = Math.round(timeoutMs / 60_000);
      const reason = `no one decided within ${minutes >= 1 ? `${minutes} min` : `${timeoutMs} ms`}`;
      await asked.record(
        `denied, ${reason}: ${asked.description}`,
        false,
        { decision: "expired", approvalId: id },
        reason,
      );
      throw new MutationRefused(`This action was not approved: ${reason}. ${NOTHING_RAN}`);
    }
    await new Promise((done) => setTimeout(done, pollMs));
  }
}

/** Ends a pending approval without a person's decision; false when one decided first. */
async function settle(ctx: ServiceContext, id: string, status: "expired" | "canceled"): Promise<boolean> {
  const rows = await ctx.db
    .update(mutationApprovals)
    .set({ status, decidedAt: sql`now()` })
    .where(and(eq(mutationApprovals.id, id), eq(mutationApprovals.status, "pending")))
    .returning({ id: mutationApprovals.id });
  return rows.length > 0;
}
