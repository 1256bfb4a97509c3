/** TRM-4: the browser terminal's capability URL. */
import { z } from "zod";
import { botId, computerId, defineContract, timestamp } from "../define.ts";
import { screenSlot } from "../views.ts";
import { CONTROLLED_MACHINE_ERRORS } from "./error-sets.ts";

export const computerTerminalUrl = defineContract({
  name: "computer/terminalUrl",
  auth: "token",
  summary: "Get a terminal URL",
  description:
    "A sealed terminal capability for the bot's computer. Precondition: the caller's live control lease of that bot (NOT_IN_CONTROL otherwise); it never outlives that lease and ends with the bot's screen. Every websocket opened on `websocketUrl` gets its own shell. UNSUPPORTED when the provider has no browser shell.",
  errors: CONTROLLED_MACHINE_ERRORS,
  input: z.strictObject({
    computerId,
    botId,
    ttlSeconds: z
      .number()
      .int()
      .min(10)
      .optional()
      .describe(
        "The URL's lifetime; at most the deployment's SCREEN_URL_MAX_TTL_SECONDS (else INVALID_INPUT).",
      ),
  }),
  output: z.strictObject({
    url: z.string().describe("The web service's own xterm.js page for this capability."),
    websocketUrl: z.string().describe("`ws(s)://…/terminals/<capability>/pty`: one shell per connection."),
    capabilityId: z.string(),
    expiresAt: timestamp,
    slot: screenSlot,
  }),
});
