import * as contracts from "@rakazo/api-contract";
import { terminalUrl } from "@rakazo/services";
import { defineRpc } from "./define.ts";

export const computerTerminalUrl = defineRpc(contracts.computerTerminalUrl, terminalUrl, {
  // Never the URL: it carries the capability.
  activity: (input, outcome) => ({
    computerId: input.computerId,
    botId: input.botId,
    line: "terminal_url",
    details: outcome.ok ? { expiresAt: outcome.result.expiresAt, slot: outcome.result.slot } : {},
  }),
});
