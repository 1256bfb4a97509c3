/**
 * Tool parameter schemas in TypeBox, which is JSON Schema: `toolJsonSchemas()` hands them to
 * another framework (MCP, OpenAI tools, …) unchanged (ARCH-2). Desktop actions have the shape of
 * `DesktopAction` in @rakazo/sandbox; page actions the shape of `PageAction`.
 */
import { type Static, Type } from "typebox";

const coordinate = Type.Integer({ minimum: 0, maximum: 16_384 });
const button = Type.Union([Type.Literal("left"), Type.Literal("right"), Type.Literal("middle")]);
const point = Type.Object({ x: coordinate, y: coordinate }, { additionalProperties: false });

export const DesktopActionSchema = Type.Union([
  Type.Object({ type: Type.Literal("move"), x: coordinate, y: coordinate }, { additionalProperties: false }),
  Type.Object(
    {
      type: Type.Literal("click"),
      x: Type.Optional(coordinate),
      y: Type.Optional(coordinate),
      button: Type.Optional(button),
      double: Type.Optional(Type.Boolean()),
    },
    { additionalProperties: false },
  ),
  Type.Object(
    { type: Type.Literal("drag"), from: point, to: point, button: Type.Optional(button) },
    { additionalProperties: false },
  ),
  Type.Object(
    {
      type: Type.Literal("scroll"),
      x: Type.Optional(coordinate),
      y: Type.Optional(coordinate),
      dx: Type.Optional(Type.Integer({ minimum: -100, maximum: 100 })),
      dy: Type.Integer({ minimum: -100, maximum: 100, description: "positive scrolls down" }),
    },
    { additionalProperties: false },
  ),
  Type.Object(
    { type: Type.Literal("type"), text: Type.String({ minLength: 1, maxLength: 10_000 }) },
    { additionalProperties: false },
  ),
  Type.Object(
    {
      type: Type.Literal("key"),
      keys: Type.String({ pattern: "^[A-Za-z0-9_+]+$", description: 'xdotool combo: "ctrl+l", "Return"' }),
    },
    { additionalProperties: false },
  ),
  Type.Object(
    { type: Type.Literal("wait"), ms: Type.Integer({ minimum: 0, maximum: 10_000 }) },
    { additionalProperties: false },
  ),
]);

const ref = Type.String({ minLength: 1, maxLength: 64, description: "an element ref from browser_snapshot" });

export const PageActionSchema = Type.Union([
  Type.Object({ type: Type.Literal("click"), ref }, { additionalProperties: false }),
  Type.Object(
    { type: Type.Literal("fill"), ref, text: Type.String({ maxLength: 10_000 }) },
    { additionalProperties: false },
  ),
  Type.Object({ type: Type.Literal("select"), ref, value: Type.String() }, { additionalProperties: false }),
  Type.Object({ type: Type.Literal("check"), ref, checked: Type.Boolean() }, { additionalProperties: false }),
  Type.Object(
    {
      type: Type.Literal("press"),
      key: Type.String({ pattern: "^[A-Za-z0-9]+$", description: 'DOM key name: "Enter", "Tab", "Escape"' }),
      ref: Type.Optional(ref),
    },
    { additionalProperties: false },
  ),
  Type.Object(
    { type: Type.Literal("scroll"), dy: Type.Integer({ minimum: -20_000, maximum: 20_000 }) },
    { additionalProperties: false },
  ),
  Type.Object(
    { type: Type.Literal("wait"), ms: Type.Integer({ minimum: 0, maximum: 10_000 }) },
    { additionalProperties: false },
  ),
]);

const path = Type.String({ minLength: 1, maxLength: 4_096, description: "workspace-relative path" });

export const SCHEMAS = {
  computer_observe: Type.Object({}, { additionalProperties: false }),
  computer_act: Type.Object(
    { actions: Type.Array(DesktopActionSchema, { minItems: 1, maxItems: 50, description: "run in order" }) },
    { additionalProperties: false },
  ),
  shell: Type.Object(
    {
      command: Type.Optional(Type.String({ minLength: 1, maxLength: 20_000, description: "run by sh -c" })),
      argv: Type.Optional(
        Type.Array(Type.String(), { minItems: 1, maxItems: 200, description: "run directly, no shell" }),
      ),
      cwd: Type.Optional(path),
      timeoutSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 600 })),
    },
    { additionalProperties: false },
  ),
  read_file: Type.Object({ path }, { additionalProperties: false }),
  write_file: Type.Object(
    { path, content: Type.String({ maxLength: 5_000_000 }) },
    { additionalProperties: false },
  ),
  list_files: Type.Object({ path: Type.Optional(path) }, { additionalProperties: false }),
  attach_file: Type.Object(
    { path, note: Type.Optional(Type.String({ maxLength: 500 })) },
    { additionalProperties: false },
  ),
  open_path: Type.Object({ path }, { additionalProperties: false }),
  launch_app: Type.Object(
    {
      app: Type.String({ pattern: "^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$", description: "program name" }),
      args: Type.Optional(Type.Array(Type.String({ maxLength: 4_096 }), { maxItems: 50 })),
    },
    { additionalProperties: false },
  ),
  request_takeover: Type.Object(
    { reason: Type.String({ minLength: 1, maxLength: 1_000, description: "what the person must do" }) },
    { additionalProperties: false },
  ),
  browser_navigate: Type.Object(
    { url: Type.String({ minLength: 1, maxLength: 8_000, description: "http(s) URL" }) },
    { additionalProperties: false },
  ),
  browser_snapshot: Type.Object({}, { additionalProperties: false }),
  browser_act: Type.Object(
    { actions: Type.Array(PageActionSchema, { minItems: 1, maxItems: 30, description: "run in order" }) },
    { additionalProperties: false },
  ),
} as const;

export type ToolName = keyof typeof SCHEMAS;
export type ToolParams<N extends ToolName> = Static<(typeof SCHEMAS)[N]>;

/** Every tool's parameters as plain JSON Schema (no TypeBox symbols), keyed by tool name. */
export function toolJsonSchemas(): Record<ToolName, Record<string, unknown>> {
  return JSON.parse(JSON.stringify(SCHEMAS)) as Record<ToolName, Record<string, unknown>>;
}
