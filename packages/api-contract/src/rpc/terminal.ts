/** TRM-4: the browser terminal's capability URL. */
import { z } from "zod";
import { botId, computerId, defineContract, timestamp } from "../define.ts";
import { screenSlot } from "../views.ts";

/**
 * A sealed `terminal` capability for the bot's computer (TRM-4): needs the caller's live control
 * lease of that bot (NOT_IN_CONTROL otherwise) and never outlives it. The capability is bound to
 * the slot generation of the bot's screen, so screen teardown ends it too (TRM-6). Every
 * websocket opened on `websocketUrl` gets its own shell; frames are `@rakazo/protocol/terminal`.
 * Computers whose provider has no browser shell answer UNSUPPORTED (TRM-7).
 */
export const computerTerminalUrl = defineContract({
  name: "computer/terminalUrl",
  auth: "token",
  input: z.strictObject({
    computerId,
    botId,
    /** The URL's lifetime; at most the deployment's SCREEN_URL_MAX_TTL_SECONDS (else INVALID_INPUT). */
    ttlSeconds: z.number().int().min(10).optional(),
  }),
  output: z.strictObject({
    /** The web service's own xterm.js page for this capability. */
    url: z.string(),
    /** `ws(s)://…/terminals/<capability>/pty`: one shell per connection. */
    websocketUrl: z.string(),
    capabilityId: z.string(),
    expiresAt: timestamp,
    slot: screenSlot,
  }),
});
