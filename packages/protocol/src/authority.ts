/**
 * The screen authority's request and answer (SCR-5, SCR-6): the web service posts a capability
 * to the API's `POST /internal/screens/authorize` with the service token and gets back where
 * the gateway is and which ticket to present there.
 */
import { z } from "zod";
import { MAX_TOKEN_CHARS } from "./capability-codec.ts";
import { screenGatewayTargetSchema, TICKET_PATTERN } from "./gateway.ts";

export const SCREEN_AUTHORITY_PATH = "/internal/screens/authorize";

export const screenAuthorityRequestSchema = z.object({
  capability: z.string().min(1).max(MAX_TOKEN_CHARS),
});
export type ScreenAuthorityRequest = z.infer<typeof screenAuthorityRequestSchema>;

/** The `result` of a 200 answer; refusals are `403 {error:{code:"FORBIDDEN", details:{reason}}}`. */
export const screenAuthorityAnswerSchema = z.object({
  target: screenGatewayTargetSchema,
  ticket: z.string().regex(TICKET_PATTERN),
  policy: z.enum(["view", "control", "terminal"]),
});
