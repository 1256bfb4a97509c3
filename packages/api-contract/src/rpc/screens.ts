import { z } from "zod";
import { botId, computerId, defineContract, timestamp } from "../define.ts";
import { screenSlot } from "../views.ts";
import { CONTROLLED_MACHINE_ERRORS } from "./error-sets.ts";

export const computerScreenUrl = defineContract({
  name: "computer/screenUrl",
  auth: "token",
  summary: "Get a screen URL",
  description:
    "A sealed capability URL for the bot's screen (noVNC), view or control, and the embed page for it. `ttlSeconds` is at most SCREEN_URL_MAX_TTL_SECONDS (else INVALID_INPUT; default 15 minutes). A control URL needs the caller's control lease of the bot (NOT_IN_CONTROL otherwise) and never outlives it.",
  errors: CONTROLLED_MACHINE_ERRORS,
  input: z.strictObject({
    computerId,
    botId,
    policy: z.enum(["view", "control"]),
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
    url: z.string(),
    embedUrl: z
      .string()
      .describe(
        "The project's embed page for the same capability (a sandboxed frame that reports what it shows).",
      ),
    policy: z.enum(["view", "control"]),
    capabilityId: z.string(),
    expiresAt: timestamp,
    slot: screenSlot,
  }),
});

export const computerRevokeScreenUrl = defineContract({
  name: "computer/revokeScreenUrl",
  auth: "token",
  summary: "Revoke a screen URL",
  description: "Revokes a screen capability and closes its open connections (`closed`).",
  errors: [
    "COMPUTER_GONE",
    "COMPUTER_NOT_READY",
    "DESKTOP_UNAVAILABLE",
    "FILE_NOT_FOUND",
    "FILE_TOO_LARGE",
    "INVALID_PATH",
    "MULTI_SCREEN_UNAVAILABLE",
    "NOT_FOUND",
    "PROCESS_LIMIT",
    "PROVIDER_ERROR",
    "UNSUPPORTED",
  ],
  input: z.strictObject({
    computerId,
    capabilityId: z.string().regex(/^[A-Za-z0-9_-]{16,64}$/),
  }),
  /** How many open screen connections the revocation closed. */
  output: z.strictObject({ closed: z.number().int() }),
});
