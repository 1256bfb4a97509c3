import { desktopActionSchema } from "@rakazo/protocol";
import { z } from "zod";
import { botId, computerId, defineContract } from "../define.ts";
import { screenObservation } from "../views.ts";
import { DESKTOP_ERRORS } from "./error-sets.ts";

/** Desktop actions as the API accepts them (TOOL-1): @rakazo/protocol's one schema. */
export const desktopAction = desktopActionSchema;

const botTarget = {
  computerId,
  botId,
  fencingToken: z
    .number()
    .int()
    .positive()
    .optional()
    .describe("The caller's execution lease; without it, nobody else may hold the bot's lease."),
  controlToken: z
    .number()
    .int()
    .positive()
    .optional()
    .describe("The caller's control lease token, while they control the bot."),
};

export const computerObserve = defineContract({
  name: "computer/observe",
  auth: "token",
  summary: "Screenshot a bot's screen",
  description:
    "A screenshot of the bot's desktop. Pass the caller's execution lease (`fencingToken`) or, while a person controls the bot, their `controlToken`; without either it is refused while someone else holds the bot's lease (LEASE_HELD) or a person controls it (HUMAN_IN_CONTROL).",
  errors: DESKTOP_ERRORS,
  input: z.strictObject(botTarget),
  output: screenObservation,
});

export const computerAct = defineContract({
  name: "computer/act",
  auth: "token",
  summary: "Act on a bot's screen",
  description:
    "Runs desktop actions (clicks, keys, typing) in order on the bot's desktop, stopping at the first failure, which `error.index` names. Same lease rules as `computer/observe`: the caller's `fencingToken`, or `controlToken` while a person controls the bot.",
  errors: DESKTOP_ERRORS,
  input: z.strictObject({ ...botTarget, actions: z.array(desktopAction).min(1).max(100) }),
  /** Actions run in order and stop at the first failure, which `error.index` names. */
  output: z.strictObject({
    completed: z.number().int(),
    total: z.number().int(),
    error: z.strictObject({ code: z.string(), message: z.string(), index: z.number().int() }).optional(),
  }),
});
