import { actOnDesktop, describeDesktopAction, observeDesktop } from "@rakazo/services";
import { z } from "zod";
import { defineRpc, ids } from "./define.ts";

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
};

export const computerObserve = defineRpc({
  name: "computer/observe",
  auth: "token",
  input: z.strictObject(botTarget),
  handler: (ctx, caller, input) => observeDesktop(ctx, caller, input),
});

export const computerAct = defineRpc({
  name: "computer/act",
  auth: "token",
  input: z.strictObject({ ...botTarget, actions: z.array(desktopAction).min(1).max(100) }),
  handler: (ctx, caller, input) => actOnDesktop(ctx, caller, input),
  activity: (input, outcome) => {
    const summary = input.actions.map(describeDesktopAction).join(", ");
    const base = { computerId: input.computerId, botId: input.botId };
    if (!outcome.ok) return { ...base, line: `computer_act ${summary}` };
    const { completed, total, error } = outcome.result;
    return {
      ...base,
      line: `computer_act ${summary} (${completed}/${total})`,
      ok: !error,
      details: { completed, total, ...(error ? { error: error.code } : {}) },
    };
  },
});
