import { revokeScreenUrl, screenUrl } from "@rakazo/services";
import { z } from "zod";
import { defineRpc, ids } from "./define.ts";

export const computerScreenUrl = defineRpc({
  name: "computer/screenUrl",
  auth: "token",
  input: z.strictObject({
    computerId: z.string().regex(ids.computer),
    botId: z.string().regex(ids.bot),
    policy: z.enum(["view", "control"]),
    /** The URL's lifetime; at most the deployment's SCREEN_URL_MAX_TTL_SECONDS (else INVALID_INPUT). */
    ttlSeconds: z.number().int().min(10).optional(),
  }),
  handler: (ctx, caller, input) => screenUrl(ctx, caller, input),
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

export const computerRevokeScreenUrl = defineRpc({
  name: "computer/revokeScreenUrl",
  auth: "token",
  input: z.strictObject({
    computerId: z.string().regex(ids.computer),
    capabilityId: z.string().regex(/^[A-Za-z0-9_-]{16,64}$/),
  }),
  handler: (ctx, caller, input) => revokeScreenUrl(ctx, caller, input),
  activity: (input) => ({ computerId: input.computerId, line: "revoke_screen_url" }),
});
