import {
  endRun,
  getRun,
  heartbeatRun,
  releaseControl,
  requestTakeover,
  startRun,
  stopBot,
  takeControl,
} from "@rakazo/services";
import { z } from "zod";
import { defineRpc, ids } from "./define.ts";

const runId = z.string().regex(/^run_[a-z0-9]{20}$/, "expected a run id (run_…)");
const fencingToken = z.number().int().positive();
const ttlMs = z
  .number()
  .int()
  .min(1_000)
  .max(24 * 3_600_000)
  .optional();
const botOnComputer = { computerId: z.string().regex(ids.computer), botId: z.string().regex(ids.bot) };

export const runStart = defineRpc({
  name: "run/start",
  auth: "token",
  input: z.strictObject({ ...botOnComputer, leaseTtlMs: ttlMs }),
  handler: (ctx, caller, input) => startRun(ctx, caller, input),
});

export const runGet = defineRpc({
  name: "run/get",
  auth: "token",
  input: z.strictObject({ runId }),
  handler: (ctx, caller, input) => getRun(ctx, caller, input),
});

export const runHeartbeat = defineRpc({
  name: "run/heartbeat",
  auth: "token",
  input: z.strictObject({ runId, fencingToken, leaseTtlMs: ttlMs }),
  handler: (ctx, caller, input) => heartbeatRun(ctx, caller, input),
});

export const runRequestTakeover = defineRpc({
  name: "run/requestTakeover",
  auth: "token",
  input: z.strictObject({ runId, fencingToken, reason: z.string().trim().min(1).max(500) }),
  handler: (ctx, caller, input) => requestTakeover(ctx, caller, input),
});

const ending = (outcome: "complete" | "fail" | "cancel") =>
  defineRpc({
    name: `run/${outcome}`,
    auth: "token",
    input: z.strictObject({ runId, fencingToken, error: z.string().max(2_000).optional() }),
    handler: (ctx, caller, input) => endRun(ctx, caller, { ...input, outcome }),
  });
export const runComplete = ending("complete");
export const runFail = ending("fail");
export const runCancel = ending("cancel");

export const computerTakeControl = defineRpc({
  name: "computer/takeControl",
  auth: "token",
  input: z.strictObject({ ...botOnComputer, ttlMs }),
  handler: (ctx, caller, input) => takeControl(ctx, caller, input),
  activity: (input, outcome) => ({
    computerId: input.computerId,
    botId: input.botId,
    line: "take_control",
    ...(outcome.ok ? { details: { expiresAt: outcome.result.expiresAt.toISOString() } } : {}),
  }),
});

export const computerReleaseControl = defineRpc({
  name: "computer/releaseControl",
  auth: "token",
  input: z.strictObject(botOnComputer),
  handler: (ctx, caller, input) => releaseControl(ctx, caller, input),
  activity: (input, outcome) => ({
    computerId: input.computerId,
    botId: input.botId,
    line: "release_control",
    ...(outcome.ok ? { details: { resumedRunId: outcome.result.resumedRunId } } : {}),
  }),
});

export const computerStopBot = defineRpc({
  name: "computer/stopBot",
  auth: "token",
  input: z.strictObject(botOnComputer),
  handler: (ctx, caller, input) => stopBot(ctx, caller, input),
  activity: (input, outcome) => ({
    computerId: input.computerId,
    botId: input.botId,
    line: "stop_bot",
    ...(outcome.ok ? { details: { canceledRunId: outcome.result.canceledRunId } } : {}),
  }),
});
