/**
 * Page actions and results (BRW-1..5), written once: the agent's `browser_act` tool schema, the
 * supervisor's `page.act` validation and the host's result check all use these.
 */
import { z } from "zod";
import type { DeepReadonly } from "./readonly.ts";

/** A snapshot holds at most this many interactive elements (BRW-4). */
export const PAGE_MAX_ELEMENTS = 80;
/** … and at most this much page text (BRW-4). */
export const PAGE_MAX_TEXT_CHARS = 8_000;
export const PAGE_MAX_WAIT_MS = 10_000;
export const PAGE_MAX_FILL_CHARS = 10_000;

const ref = z.string().min(1).max(64).describe("an element ref from browser_snapshot");

export const pageActionSchema = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("click"), ref }),
  /** Replaces the field's value with `text`. */
  z.strictObject({ type: z.literal("fill"), ref, text: z.string().max(PAGE_MAX_FILL_CHARS) }),
  z.strictObject({ type: z.literal("select"), ref, value: z.string() }),
  z.strictObject({ type: z.literal("check"), ref, checked: z.boolean() }),
  z.strictObject({
    type: z.literal("press"),
    key: z
      .string()
      .regex(/^[A-Za-z0-9]+$/)
      .describe('DOM key name: "Enter", "Tab", "Escape"'),
    ref: ref.optional(),
  }),
  z.strictObject({ type: z.literal("scroll"), dy: z.number().int().min(-20_000).max(20_000) }),
  z.strictObject({ type: z.literal("wait"), ms: z.number().int().min(0).max(PAGE_MAX_WAIT_MS) }),
]);
/** One step of an ordered page action batch. Keys are DOM key names: "Enter", "Tab", "Escape". */
export type PageAction = DeepReadonly<z.infer<typeof pageActionSchema>>;

export const pageNavigationSchema = z.object({
  url: z.string(),
  title: z.string(),
  /** HTTP status of the main document, when the backend knows it. */
  status: z.number().int().optional(),
});
export type PageNavigation = DeepReadonly<z.infer<typeof pageNavigationSchema>>;

export const pageElementSchema = z.object({
  /** Opaque; valid only for the document it was taken from. */
  ref: z.string(),
  /** ARIA-ish role: link, button, textbox, checkbox, radio, combobox, … */
  role: z.string(),
  /** Accessible name (label, text, aria-label, placeholder). */
  name: z.string(),
  /** Current value of form fields; `"••••"` for password fields (BRW-3). */
  value: z.string().optional(),
  checked: z.boolean().optional(),
  disabled: z.boolean().optional(),
  href: z.string().optional(),
});
export type PageElement = DeepReadonly<z.infer<typeof pageElementSchema>>;

export const pageSnapshotSchema = z.object({
  url: z.string(),
  title: z.string(),
  /** Visible text, whitespace-collapsed, cut to `PAGE_MAX_TEXT_CHARS`. */
  text: z.string().max(PAGE_MAX_TEXT_CHARS),
  textTruncated: z.boolean(),
  /** In document order, at most `PAGE_MAX_ELEMENTS`. */
  elements: z.array(pageElementSchema).max(PAGE_MAX_ELEMENTS),
  /** Interactive elements left out by the cap. */
  omittedElements: z.number().int().min(0),
  /** Frames on the page; their content is not in the snapshot (use desktop tools, BRW-4). */
  frames: z.number().int().min(0),
});
export type PageSnapshot = DeepReadonly<z.infer<typeof pageSnapshotSchema>>;

export const pageActErrorCodeSchema = z.enum([
  /** The ref belongs to an earlier document or a removed element (never retargeted). */
  "STALE_REF",
  /** No such ref was ever handed out for this document. */
  "UNKNOWN_REF",
  /** The element cannot take this action (hidden, disabled, covered, wrong kind, in a frame). */
  "NOT_ACTIONABLE",
  /** The action was sent but its effect did not settle in time (e.g. a navigation that hangs). */
  "TIMEOUT",
  "FAILED",
]);
export type PageActErrorCode = z.infer<typeof pageActErrorCodeSchema>;

export const pageActResultSchema = z.object({
  /** How many actions, from the start of the batch, are confirmed done. */
  completed: z.number().int().min(0),
  total: z.number().int().min(0),
  /** The page after the batch (or after the failure). */
  url: z.string(),
  title: z.string(),
  /** Files the batch downloaded, saved under the workspace's `downloads/` folder. */
  downloads: z.array(z.object({ path: z.string(), size: z.number() })),
  error: z
    .object({
      code: pageActErrorCodeSchema,
      message: z.string(),
      /** Index of the failed action; equals `completed`. */
      index: z.number().int(),
      /**
       * True when the failed action was (or may have been) delivered to the page, so its effect
       * is unknown: check with a snapshot before doing anything that could repeat it.
       */
      uncertain: z.boolean(),
    })
    .optional(),
});
export type PageActResult = DeepReadonly<z.infer<typeof pageActResultSchema>>;
