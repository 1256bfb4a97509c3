/**
 * Desktop actions (TOOL-1), written once: the API's `computer/act` input, the agent's
 * `computer_act` tool schema (JSON Schema derived from this) and the supervisor's validation
 * all use `desktopActionSchema`. Changing a limit here changes what all three accept.
 */
import { z } from "zod";
import type { DeepReadonly } from "./readonly.ts";

/** The screen every desktop runs at (Xvfb and Chromium's window); coordinates are bounded by it. */
export const DESKTOP_SCREEN = { width: 1280, height: 800 } as const;
export const MAX_WAIT_MS = 10_000;
export const MAX_TYPE_CHARS = 10_000;
export const MAX_SCROLL_STEPS = 100;
/**
 * One or more space-separated combos of X keysym names joined by "+": "ctrl+l", "Return",
 * "shift+Tab", "ctrl+a Delete". A leading "-" can never reach xdotool as an option.
 */
export const KEY_SPEC = /^[A-Za-z0-9_]+(\+[A-Za-z0-9_]+)*( [A-Za-z0-9_]+(\+[A-Za-z0-9_]+)*)*$/;
const MAX_KEY_CHARS = 200;

const x = z
  .number()
  .int()
  .min(0)
  .max(DESKTOP_SCREEN.width - 1);
const y = z
  .number()
  .int()
  .min(0)
  .max(DESKTOP_SCREEN.height - 1);
const mouseButton = z.enum(["left", "right", "middle"]);
const point = z.strictObject({ x, y });
const scrollSteps = z.number().int().min(-MAX_SCROLL_STEPS).max(MAX_SCROLL_STEPS);
/** An optional pointer position is x and y together or neither; JSON Schema says so too. */
const pairedXY = (value: { x?: number; y?: number }): boolean =>
  (value.x === undefined) === (value.y === undefined);
const PAIRED_XY = { message: "x and y go together", path: ["x"] };
const PAIRED_XY_JSON = { dependentRequired: { x: ["y"], y: ["x"] } };

export const desktopActionSchema = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("move"), x, y }),
  z
    .strictObject({
      type: z.literal("click"),
      x: x.optional(),
      y: y.optional(),
      button: mouseButton.optional(),
      double: z.boolean().optional(),
    })
    .refine(pairedXY, PAIRED_XY)
    .meta(PAIRED_XY_JSON),
  z.strictObject({ type: z.literal("drag"), from: point, to: point, button: mouseButton.optional() }),
  z
    .strictObject({
      type: z.literal("scroll"),
      x: x.optional(),
      y: y.optional(),
      dx: scrollSteps.optional(),
      dy: scrollSteps.describe("positive scrolls down"),
    })
    .refine(pairedXY, PAIRED_XY)
    .meta(PAIRED_XY_JSON),
  z.strictObject({ type: z.literal("type"), text: z.string().min(1).max(MAX_TYPE_CHARS) }),
  z.strictObject({
    type: z.literal("key"),
    keys: z
      .string()
      .max(MAX_KEY_CHARS)
      .regex(KEY_SPEC, 'keys look like "ctrl+l", "Return" or "shift+Tab" (space-separated for a sequence)')
      .describe('xdotool combos: "ctrl+l", "Return", "ctrl+a Delete"'),
  }),
  z.strictObject({ type: z.literal("wait"), ms: z.number().int().min(0).max(MAX_WAIT_MS) }),
]);

export type DesktopAction = DeepReadonly<z.infer<typeof desktopActionSchema>>;
export type MouseButton = z.infer<typeof mouseButton>;
export interface Point {
  readonly x: number;
  readonly y: number;
}
