/**
 * Bots at work, as a person watches them: a run's transcript, a bot's run history, the runs of
 * a space that wait for a person, and whether the deployment can run agents at all.
 */
import { z } from "zod";
import { botId, computerId, defineContract, runId, spaceId, timestamp } from "../define.ts";
import { runView } from "../views.ts";

/** One transcript event; `payload` is redacted by the API before it is stored. */
export const runEventView = z.strictObject({
  id: z.string(),
  runId: z.string(),
  seq: z.number().int().positive(),
  type: z.string(),
  payload: z.record(z.string(), z.unknown()),
  thumbnail: z.string().nullable(),
  createdAt: timestamp,
});

export const runTranscript = defineContract({
  name: "run/transcript",
  auth: "token",
  summary: "Read a run's transcript",
  description:
    "The run's transcript in order: `status`, `text` (the model's words), `tool` (name, redacted arguments and result, duration, an observation's thumbnail) and `error` events, after `afterSeq` (0 or omitted: from the start), at most 200 per page (`more` when there are more). New events stream live as `run.event` on `/activity/stream`.",
  errors: ["NOT_FOUND"],
  input: z.strictObject({ runId, afterSeq: z.number().int().min(0).optional() }),
  output: z.strictObject({ events: z.array(runEventView), more: z.boolean() }),
});

export const runList = defineContract({
  name: "run/list",
  auth: "token",
  summary: "List a bot's runs",
  description:
    "The bot's runs on the computer, newest first (at most `limit`, default 20): status, error, takeover reason, the task's start, when it started and finished, and how many tool calls it made.",
  errors: ["NOT_FOUND"],
  input: z.strictObject({ computerId, botId, limit: z.number().int().min(1).max(100).optional() }),
  output: z.array(
    runView.extend({
      task: z.string().nullable(),
      createdAt: timestamp,
      startedAt: timestamp.nullable(),
      finishedAt: timestamp.nullable(),
      toolCalls: z.number().int().min(0),
    }),
  ),
});

export const runWaiting = defineContract({
  name: "run/waiting",
  auth: "token",
  summary: "List runs waiting for a person",
  description:
    "The space's runs that asked a person to take over (`waiting_takeover`), oldest first, with the bot's reason: what the space's computer list shows.",
  errors: ["NOT_FOUND"],
  input: z.strictObject({ spaceId }),
  output: z.array(
    z.strictObject({
      runId: z.string(),
      computerId: z.string(),
      botId: z.string(),
      reason: z.string().nullable(),
      since: timestamp.nullable(),
    }),
  ),
});

export const agentStatus = defineContract({
  name: "agent/status",
  auth: "token",
  summary: "Whether agents can run",
  description:
    "Whether the deployment has an agent model configured (`AGENT_MODEL`); when not, `problem` says what to set, so a task box can say it before a task is typed.",
  errors: [],
  input: z.strictObject({}),
  output: z.strictObject({
    configured: z.boolean(),
    model: z.string().nullable(),
    problem: z.string().nullable(),
  }),
});
