/**
 * JSON Schema from the zod schemas, for consumers that speak JSON Schema (the agent's tools,
 * MCP, OpenAI tools): derived, never written a second time.
 */
import { z } from "zod";

export type JsonSchema = Record<string, unknown>;

/** A plain JSON Schema object for `schema` (draft 2020-12, no `$schema` so it nests anywhere). */
export function jsonSchemaOf(schema: z.ZodType): JsonSchema {
  const { $schema: _, ...json } = z.toJSONSchema(schema, {
    target: "draft-2020-12",
    io: "input",
  }) as JsonSchema;
  return json;
}
