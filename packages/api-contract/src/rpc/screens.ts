import { z } from "zod";
import { defineContract, ids, timestamp } from "../define.ts";
import { screenSlot } from "../views.ts";

export const computerScreenUrl = defineContract({
  name: "computer/screenUrl",
  auth: "token",
  input: z.strictObject({
    computerId: z.string().regex(ids.computer),
    botId: z.string().regex(ids.bot),
    policy: z.enum(["view", "control"]),
  }),
  output: z.strictObject({
    url: z.string(),
    policy: z.enum(["view", "control"]),
    capabilityId: z.string(),
    expiresAt: timestamp,
    slot: screenSlot,
  }),
});

export const computerRevokeScreenUrl = defineContract({
  name: "computer/revokeScreenUrl",
  auth: "token",
  input: z.strictObject({
    computerId: z.string().regex(ids.computer),
    capabilityId: z.string().regex(/^[A-Za-z0-9_-]{16,64}$/),
  }),
  /** How many open screen connections the revocation closed. */
  output: z.strictObject({ closed: z.number().int() }),
});
