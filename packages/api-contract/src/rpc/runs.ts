import { z } from "zod";
import { botId, computerId, defineContract, runId } from "../define.ts";
import { leaseView, runView } from "../views.ts";
import { CONTROLLED_MACHINE_ERRORS } from "./error-sets.ts";

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
  summary: "Start a run",
  description:
    "Starts a run of the bot on the computer and gives the caller its execution lease (`fencingToken`). LEASE_HELD while another run drives the bot.",
  errors: [
    "COMPUTER_GONE",
    "COMPUTER_NOT_READY",
    "DESKTOP_UNAVAILABLE",
    "FILE_NOT_FOUND",
    "FILE_TOO_LARGE",
    "INVALID_PATH",
    "LEASE_HELD",
    "MULTI_SCREEN_UNAVAILABLE",
    "NOT_FOUND",
    "OPERATION_IN_PROGRESS",
    "PROCESS_LIMIT",
    "PROVIDER_ERROR",
    "UNSUPPORTED",
  ],
  input: z.strictObject({ ...botOnComputer, leaseTtlMs: ttlMs }),
  output: z.strictObject({ run: runView, lease: leaseView }),
});

export const runGet = defineContract({
  name: "run/get",
  auth: "token",
  summary: "Get a run",
  description: "One run of the caller's spaces.",
  errors: ["NOT_FOUND"],
  input: z.strictObject({ runId }),
  output: runView,
});

export const runHeartbeat = defineContract({
  name: "run/heartbeat",
  auth: "token",
  summary: "Extend a run's lease",
  description:
    "Extends the run's execution lease; STALE_LEASE when the fencing token was superseded or expired.",
  errors: ["CONFLICT", "NOT_FOUND", "STALE_LEASE"],
  input: z.strictObject({ runId, fencingToken, leaseTtlMs: ttlMs }),
  output: leaseView,
});

export const runRequestTakeover = defineContract({
  name: "run/requestTakeover",
  auth: "token",
  summary: "Ask a person to take over",
  description:
    "The run asks a person to take control of its bot (state `waiting_takeover`), with the reason shown to them. Needs the run's current fencing token.",
  errors: ["CONFLICT", "NOT_FOUND", "STALE_LEASE"],
  input: z.strictObject({ runId, fencingToken, reason: z.string().trim().min(1).max(500) }),
  output: runView,
});

const ENDINGS = {
  complete: {
    summary: "Complete a run",
    description:
      "Ends the run as completed and frees its lease. Needs the run's current fencing token (STALE_LEASE otherwise).",
  },
  fail: {
    summary: "Fail a run",
    description:
      "Ends the run as failed with its error and frees its lease. Needs the run's current fencing token (STALE_LEASE otherwise).",
  },
  cancel: {
    summary: "Cancel a run",
    description:
      "Ends the run as canceled and frees its lease. Needs the run's current fencing token (STALE_LEASE otherwise).",
  },
} as const;

const ending = <const Outcome extends keyof typeof ENDINGS>(outcome: Outcome) =>
  defineContract({
    name: `run/${outcome}`,
    auth: "token",
    ...ENDINGS[outcome],
    errors: ["CONFLICT", "NOT_FOUND", "STALE_LEASE"],
    input: z.strictObject({ runId, fencingToken, error: z.string().max(2_000).optional() }),
    output: runView,
  });
export const runComplete = ending("complete");
export const runFail = ending("fail");
export const runCancel = ending("cancel");

export const computerTakeControl = defineContract({
  name: "computer/takeControl",
  auth: "token",
  summary: "Take control of a bot's screen",
  description:
    "Gives the caller the control lease of the bot (a person driving its screen). Refused while a run drives the bot (TAKEOVER_CONFLICT: stop the bot first) or another person controls it (CONTROL_HELD).",
  errors: ["CONTROL_HELD", "NOT_FOUND", "OPERATION_IN_PROGRESS", "TAKEOVER_CONFLICT"],
  input: z.strictObject({ ...botOnComputer, ttlMs }),
  output: leaseView,
});

export const computerReleaseControl = defineContract({
  name: "computer/releaseControl",
  auth: "token",
  summary: "Release control of a bot's screen",
  description:
    "Ends the caller's control lease of the bot; a run that waited for the hand-back resumes (`resumedRunId`). NOT_IN_CONTROL when the caller does not hold it.",
  errors: CONTROLLED_MACHINE_ERRORS,
  input: z.strictObject(botOnComputer),
  output: z.strictObject({ released: z.literal(true), resumedRunId: z.string().nullable() }),
});

export const computerStopBot = defineContract({
  name: "computer/stopBot",
  auth: "token",
  summary: "Stop a bot's run",
  description: "Cancels the run driving the bot, if any, and frees its execution lease.",
  errors: ["CONFLICT", "NOT_FOUND", "STALE_LEASE"],
  input: z.strictObject(botOnComputer),
  output: z.strictObject({ canceledRunId: z.string().nullable() }),
});
