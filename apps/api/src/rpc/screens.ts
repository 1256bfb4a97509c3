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
  }),
  handler: (ctx, caller, input) => screenUrl(ctx, caller, input),
});

export const computerRevokeScreenUrl = defineRpc({
  name: "computer/revokeScreenUrl",
  auth: "token",
  input: z.strictObject({
    computerId: z.string().regex(ids.computer),
    capabilityId: z.string().regex(/^[A-Za-z0-9_-]{16,64}$/),
  }),
  handler: (ctx, caller, input) => revokeScreenUrl(ctx, caller, input),
});
