import { z } from "zod";
import { botId, computerId, defineContract } from "../define.ts";
import { runView } from "../views.ts";

export const agentRun = defineContract({
  name: "agent/run",
  auth: "token",
  summary: "Start an agent",
  description:
    "Starts an agent (one Pi session in the worker) on the bot's computer with the task; answers its run. UNSUPPORTED when the deployment has no agent model.",
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
  input: z.strictObject({
    computerId,
    botId,
    task: z.string().trim().min(1).max(20_000),
  }),
  output: runView,
});
