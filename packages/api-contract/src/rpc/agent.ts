import { z } from "zod";
import { botId, computerId, defineContract } from "../define.ts";
import { runView } from "../views.ts";

/** Starts an agent (one Pi session in the worker) on a bot's computer; returns its run. */
export const agentRun = defineContract({
  name: "agent/run",
  auth: "token",
  input: z.strictObject({
    computerId,
    botId,
    task: z.string().trim().min(1).max(20_000),
  }),
  output: runView,
});
