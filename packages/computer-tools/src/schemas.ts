/**
 * Tool parameter schemas in TypeBox, which is JSON Schema: `toolJsonSchemas()` hands them to
 * another framework (MCP, OpenAI tools, …) unchanged (ARCH-2). Desktop and page actions are not
 * written here: their JSON Schema is generated from @rakazo/protocol's zod schemas, the same ones
 * the API and the supervisor validate with (docs/decisions.md, "Protocol").
 */
import {
  type DesktopAction,
  desktopActionSchema,
  jsonSchemaOf,
  type PageAction,
  pageActionSchema,
} from "@rakazo/protocol";
import { type Static, Type } from "typebox";

export const DesktopActionSchema = Type.Unsafe<DesktopAction>(jsonSchemaOf(desktopActionSchema));
export const PageActionSchema = Type.Unsafe<PageAction>(jsonSchemaOf(pageActionSchema));

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
