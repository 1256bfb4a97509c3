import { startAgentRun } from "@rakazo/services";
import { z } from "zod";
import { defineRpc, ids } from "./define.ts";

/** Starts an agent (one Pi session in the worker) on a bot's computer; returns its run. */
export const agentRun = defineRpc({
  name: "agent/run",
  auth: "token",
  input: z.strictObject({
    computerId: z.string().regex(ids.computer),
    botId: z.string().regex(ids.bot),
    task: z.string().trim().min(1).max(20_000),
  }),
  handler: (ctx, caller, input) => startAgentRun(ctx, caller, input),
});
