import { z } from "zod";
import { defineContract, ids } from "../define.ts";
import { screenSlot } from "../views.ts";

const coordinate = z.number().int().min(0).max(16_384);
const button = z.enum(["left", "right", "middle"]);
const point = z.strictObject({ x: coordinate, y: coordinate });

/** Desktop actions as the API accepts them (TOOL-1); the supervisor executes them in order. */
export const desktopAction = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("move"), x: coordinate, y: coordinate }),
  z.strictObject({
    type: z.literal("click"),
    x: coordinate.optional(),
    y: coordinate.optional(),
    button: button.optional(),
    double: z.boolean().optional(),
  }),
  z.strictObject({ type: z.literal("drag"), from: point, to: point, button: button.optional() }),
  z.strictObject({
    type: z.literal("scroll"),
    x: coordinate.optional(),
    y: coordinate.optional(),
    dx: z.number().int().min(-100).max(100).optional(),
    dy: z.number().int().min(-100).max(100),
  }),
  z.strictObject({ type: z.literal("type"), text: z.string().min(1).max(10_000) }),
  z.strictObject({
    type: z.literal("key"),
    keys: z.string().regex(/^[A-Za-z0-9_+]+$/, "keys look like ctrl+l, Return or shift+Tab"),
  }),
  z.strictObject({ type: z.literal("wait"), ms: z.number().int().min(0).max(10_000) }),
]);

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
