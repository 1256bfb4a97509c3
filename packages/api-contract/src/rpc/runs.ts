import { z } from "zod";
import { botId, computerId, defineContract, runId } from "../define.ts";
import { leaseView, runView } from "../views.ts";

const fencingToken = z.number().int().positive();
const ttlMs = z
  .number()
  .int()
  .min(1_000)
  .max(24 * 3_600_000)
  .optional();
const botOnComputer = { computerId, botId };

export const runStart = defineContract({
  name: "run/start",
  auth: "token",
  input: z.strictObject({ ...botOnComputer, leaseTtlMs: ttlMs }),
  output: z.strictObject({ run: runView, lease: leaseView }),
});

export const runGet = defineContract({
  name: "run/get",
  auth: "token",
  input: z.strictObject({ runId }),
  output: runView,
});

export const runHeartbeat = defineContract({
  name: "run/heartbeat",
  auth: "token",
  input: z.strictObject({ runId, fencingToken, leaseTtlMs: ttlMs }),
  output: leaseView,
});

export const runRequestTakeover = defineContract({
  name: "run/requestTakeover",
  auth: "token",
  input: z.strictObject({ runId, fencingToken, reason: z.string().trim().min(1).max(500) }),
  output: runView,
});

const ending = <const Outcome extends "complete" | "fail" | "cancel">(outcome: Outcome) =>
  defineContract({
    name: `run/${outcome}`,
    auth: "token",
    input: z.strictObject({ runId, fencingToken, error: z.string().max(2_000).optional() }),
    output: runView,
  });
export const runComplete = ending("complete");
export const runFail = ending("fail");
export const runCancel = ending("cancel");

export const computerTakeControl = defineContract({
  name: "computer/takeControl",
  auth: "token",
  input: z.strictObject({ ...botOnComputer, ttlMs }),
  output: leaseView,
});

export const computerReleaseControl = defineContract({
  name: "computer/releaseControl",
  auth: "token",
  input: z.strictObject(botOnComputer),
  output: z.strictObject({ released: z.literal(true), resumedRunId: z.string().nullable() }),
});

export const computerStopBot = defineContract({
  name: "computer/stopBot",
  auth: "token",
  input: z.strictObject(botOnComputer),
  output: z.strictObject({ canceledRunId: z.string().nullable() }),
});
