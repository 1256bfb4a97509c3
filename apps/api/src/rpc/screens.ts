import * as contracts from "@rakazo/api-contract";
import { revokeScreenUrl, screenUrl } from "@rakazo/services";
import { defineRpc } from "./define.ts";

export const computerScreenUrl = defineRpc(contracts.computerScreenUrl, screenUrl, {
  // Never the URL: it carries the capability.
  activity: (input, outcome) => ({
    computerId: input.computerId,
    botId: input.botId,
    line: `screen_url ${input.policy}`,
    details: outcome.ok
      ? { policy: input.policy, expiresAt: outcome.result.expiresAt, slot: outcome.result.slot }
      : { policy: input.policy },
  }),
});

export const computerRevokeScreenUrl = defineRpc(contracts.computerRevokeScreenUrl, revokeScreenUrl, {
  activity: (input) => ({ computerId: input.computerId, line: "revoke_screen_url" }),
});
