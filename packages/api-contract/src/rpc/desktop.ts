import { desktopActionSchema } from "@rakazo/protocol";
import { z } from "zod";
import { defineContract, ids } from "../define.ts";
import { screenSlot } from "../views.ts";

/** Desktop actions as the API accepts them (TOOL-1): @rakazo/protocol's one schema. */
export const desktopAction = desktopActionSchema;

const botTarget = {
  computerId: z.string().regex(ids.computer),
  botId: z.string().regex(ids.bot),
  /** The caller's execution lease; without it, nobody else may hold the bot's lease. */
  fencingToken: z.number().int().positive().optional(),
  /** The caller's control lease token, while they control the bot (TKO-1). */
  controlToken: z.number().int().positive().optional(),
};

export const computerObserve = defineContract({
  name: "computer/observe",
  auth: "token",
  input: z.strictObject(botTarget),
  output: z.strictObject({
    pngBase64: z.string(),
    width: z.number().int(),
    height: z.number().int(),
    frameHash: z.string(),
    slot: screenSlot,
  }),
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
