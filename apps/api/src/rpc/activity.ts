// @rakazo/services does not export its activity/ folder from the root yet; see docs/agent-tools.md.
import { listActivity } from "@rakazo/services";
import { z } from "zod";
import { defineRpc, ids } from "./define.ts";

/** `computer/activity`: a computer's command history (TOOL-4), oldest first, paged by event id. */
export const computerActivity = defineRpc({
  name: "computer/activity",
  auth: "token",
  input: z.strictObject({
    computerId: z.string().regex(ids.computer),
    after: z
      .string()
      .regex(/^evt_[a-z0-9]{20}$/)
      .optional(),
    limit: z.number().int().min(1).max(500).optional(),
  }),
  handler: (ctx, caller, input) => listActivity(ctx, caller, input),
});
