/**
 * The worker's host for agent runs (ARCH-1): one Pi session per run, in this process, with the
 * computer tools bound to the run's fenced lease. The lease is renewed while the agent works;
 * if it is lost (stopBot, expiry) the session is aborted and the run left to whoever holds it.
 */

import type { Api, Model } from "@mariozechner/pi-ai";
import { createRunAgent, recordTranscript, resolveAgentModel } from "@rakazo/computer-tools";
import { runs } from "@rakazo/db";
import type { JobContext, JobPayload } from "@rakazo/jobs";
import {
  createMutationGuard,
  endRun,
  isAppError,
  markRunHosted,
  parseAgentModel,
  renewExecutionLease,
  type ServiceContext,
  touchComputer,
} from "@rakazo/services";
import { eq } from "drizzle-orm";

export interface AgentHostOptions {
  /** `AGENT_MODEL`, e.g. `openrouter:anthropic/claude-sonnet-4`. */
  readonly model: string;
  /** A model object to use instead of resolving `model` (scripted models in tests). */
  readonly resolvedModel?: Model<Api>;
  /** Overrides whether the model sees images (for ids pi-ai does not know). */
  readonly vision?: boolean;
  /** API keys per pi-ai provider, read from the environment by the app. */
  readonly apiKeys: Readonly<Record<string, string | undefined>>;
  readonly heartbeatMs?: number;
  /** The lease each heartbeat grants (default 120 s); its lapse is how a dead host is noticed (OPS-4). */
  readonly leaseTtlMs?: number;
  /** How often a run waiting for a person checks whether they handed back or decided (default 1 s). */
  readonly takeoverPollMs?: number;
  /** How long an action the bot's policy asks about waits for a person (default 10 min, then denied). */
  readonly approvalTimeoutMs?: number;
  /** `BROWSER_PROVIDER` (BRW-7); unset picks by provider (fake → emulator, else the sandbox's). */
  readonly browser?: "sandbox" | "fake";
}

export function agentRunHandler(ctx: ServiceContext, options: AgentHostOptions) {
  return async (payload: JobPayload<"agent.run">, _job: JobContext): Promise<void> => {
    const caller = { userId: payload.userId, tokenId: "agent-run" };
    const key = { computerId: payload.computerId, botId: payload.botId, fencingToken: payload.fencingToken };
    await markRunHosted(ctx, payload.runId);
    const abort = new AbortController();
    const heartbeat = setInterval(() => {
      renewExecutionLease(ctx, { ...key, ttlMs: options.leaseTtlMs ?? 120_000 }).catch((error: unknown) => {
        ctx.log.warn("agent.lease_lost", { runId: payload.runId, error });
        abort.abort();
      });
    }, options.heartbeatMs ?? 20_000);
    let transcript: ReturnType<typeof recordTranscript> | undefined;
    try {
      const model =
        options.resolvedModel ??
        resolveAgentModel(
          parseAgentModel(options.model),
          options.vision === undefined ? {} : { vision: options.vision },
        );
      const { agent, toolCalls } = createRunAgent({
        session: {
          ctx,
          caller,
          computerId: payload.computerId,
          botId: payload.botId,
          runId: payload.runId,
          fencingToken: payload.fencingToken,
          ...(options.browser ? { browser: options.browser } : {}),
          // BRW-8: every mutating tool, browser ones included, goes through the same flow; the
          // workspace is saved at the run's end (PER-2), so a mutation only marks activity.
          hooks: {
            // The bot's policy decides each mutation first: allow, ask a person, or deny.
            ...createMutationGuard(ctx, {
              signal: abort.signal,
              ...(options.approvalTimeoutMs !== undefined ? { timeoutMs: options.approvalTimeoutMs } : {}),
              pollMs: options.takeoverPollMs ?? 1_000,
            }),
            afterMutation: () => touchComputer(ctx, payload.computerId),
          },
        },
        model,
        getApiKey: (provider) => options.apiKeys[provider],
      });
      // The transcript a person watches in the computer view (persisted, streamed live).
      transcript = recordTranscript(ctx, agent, { runId: payload.runId, computerId: payload.computerId });
      transcript.status("running", { task: payload.task });
      await agent.prompt(payload.task);
      await agent.waitForIdle();
      // TKO-3: request_takeover left the run waiting. The session stays in this process (its
      // lease kept alive above) and the same session continues once the person hands back.
      while (!abort.signal.aborted && (await runStatus(ctx, payload.runId)) === "waiting_takeover") {
        transcript.status("waiting_takeover");
        const next = await untilHandedBack(ctx, payload.runId, abort.signal, options.takeoverPollMs ?? 1_000);
        if (next !== "running") return; // stopped by a person (stopBot): the run is already ended
        transcript.status("resumed");
        ctx.log.info("agent.run_resumed", { runId: payload.runId });
        await agent.prompt(HANDED_BACK);
        await agent.waitForIdle();
      }
      if (abort.signal.aborted) return;
      const error = agent.state.errorMessage;
      await endRun(ctx, caller, {
        runId: payload.runId,
        fencingToken: payload.fencingToken,
        outcome: error ? "fail" : "complete",
        ...(error ? { error: error.slice(0, 2_000) } : {}),
      });
      // After endRun: a run a person stopped meanwhile is not "completed" in its transcript.
      transcript.status(error ? "failed" : "completed", error ? { error } : {});
      ctx.log.info("agent.run_finished", { runId: payload.runId, toolCalls: toolCalls.length });
    } catch (error) {
      ctx.log.error("agent.run_failed", { runId: payload.runId, error });
      if (!abort.signal.aborted) {
        const message = error instanceof Error ? error.message : String(error);
        await endRun(ctx, caller, { ...key, runId: payload.runId, outcome: "fail", error: message }).then(
          () => transcript?.status("failed", { error: message }),
          (endError: unknown) => {
            if (!isAppError(endError)) throw endError;
          },
        );
      }
    } finally {
      clearInterval(heartbeat);
      transcript?.stop();
      await transcript?.flush();
    }
  };
}

const HANDED_BACK =
  "The person handed control of your screen back to you. Look at the screen again (it may have changed) and continue the task.";

async function runStatus(ctx: ServiceContext, runId: string): Promise<string | undefined> {
  const [row] = await ctx.db.select({ status: runs.status }).from(runs).where(eq(runs.id, runId)).limit(1);
  return row?.status;
}

/** Waits while the run waits for a person; returns the status it moved to. */
async function untilHandedBack(
  ctx: ServiceContext,
  runId: string,
  signal: AbortSignal,
  pollMs: number,
): Promise<string | undefined> {
  for (;;) {
    const status = await runStatus(ctx, runId);
    if (status !== "waiting_takeover" || signal.aborted) return status;
    await new Promise((done) => setTimeout(done, pollMs));
  }
}
