import { desktopActionSchema } from "@rakazo/protocol";
import { z } from "zod";
import { botId, computerId, defineContract } from "../define.ts";
import { screenObservation } from "../views.ts";

/** Desktop actions as the API accepts them (TOOL-1): @rakazo/protocol's one schema. */
export const desktopAction = desktopActionSchema;

const botTarget = {
  computerId,
  botId,
  /** The caller's execution lease; without it, nobody else may hold the bot's lease. */
  fencingToken: z.number().int().positive().optional(),
  /** The caller's control lease token, while they control the bot (TKO-1). */
  controlToken: z.number().int().positive().optional(),
};

export const computerObserve = defineContract({
  name: "computer/observe",
  auth: "token",
  input: z.strictObject(botTarget),
  output: screenObservation,
});

export const computerAct = defineContract({
  name: "computer/act",
  auth: "token",
  input: z.strictObject({ ...botTarget, actions: z.array(desktopAction).min(1).max(100) }),
  /** Actions run in order and stop at the first failure, which `error.index` names. */
  output: z.strictObject({
    completed: z.number().int(),
    total: z.number().int(),
    error: z.strictObject({ code: z.string(), message: z.string(), index: z.number().int() }).optional(),
  }),
});
