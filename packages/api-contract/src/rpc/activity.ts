import { z } from "zod";
import { computerId, defineContract, eventId, timestamp } from "../define.ts";

export const computerActivity = defineContract({
  name: "computer/activity",
  auth: "token",
  summary: "Read a computer's activity",
  description:
    "A computer's command history, oldest first, paged by event id (`after`, then each answer's `next`).",
  errors: ["NOT_FOUND"],
  input: z.strictObject({
    computerId,
    after: eventId.optional(),
    limit: z.number().int().min(1).max(500).optional(),
  }),
  output: z.strictObject({
    events: z.array(
      z.strictObject({
        id: z.string(),
        computerId: z.string(),
        botId: z.string().nullable(),
        runId: z.string().nullable(),
        type: z.string(),
        payload: z.record(z.string(), z.unknown()),
        createdAt: timestamp,
      }),
    ),
    next: z.string().nullable(),
  }),
});
