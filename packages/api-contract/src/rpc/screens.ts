import { z } from "zod";
import { botId, computerId, defineContract, timestamp } from "../define.ts";
import { screenSlot } from "../views.ts";

export const computerScreenUrl = defineContract({
  name: "computer/screenUrl",
  auth: "token",
  input: z.strictObject({
    computerId,
    botId,
    policy: z.enum(["view", "control"]),
    /** The URL's lifetime; at most the deployment's SCREEN_URL_MAX_TTL_SECONDS (else INVALID_INPUT). */
    ttlSeconds: z.number().int().min(10).optional(),
  }),
  output: z.strictObject({
    url: z.string(),
    /** The project's embed page for the same capability (SCR-7 reports, sandboxed frame). */
    embedUrl: z.string(),
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
    computerId,
    capabilityId: z.string().regex(/^[A-Za-z0-9_-]{16,64}$/),
  }),
  /** How many open screen connections the revocation closed. */
  output: z.strictObject({ closed: z.number().int() }),
});
