import { API_TOKEN_KINDS, SPACE_ROLES } from "@rakazo/db/states";
import { z } from "zod";
import { computerId, defineContract, spaceId, timestamp, tokenId } from "../define.ts";

const name = z.string().trim().min(1).max(100);
const spaceView = z.strictObject({ id: z.string(), name: z.string(), role: z.enum(SPACE_ROLES) });
const botView = z.strictObject({ id: z.string(), spaceId: z.string(), name: z.string() });

export const spaceCreate = defineContract({
  name: "space/create",
  auth: "token",
  summary: "Create a space",
  description: "A new space owned by the caller.",
  errors: [],
  input: z.strictObject({ name }),
  output: spaceView,
});

export const spaceList = defineContract({
  name: "space/list",
  auth: "token",
  summary: "List your spaces",
  description: "The spaces the caller belongs to, with the caller's role in each.",
  errors: [],
  input: z.strictObject({}),
  output: z.array(spaceView),
});

export const botCreate = defineContract({
  name: "bot/create",
  auth: "token",
  summary: "Create a bot",
  description: "A new bot in one of the caller's spaces (NOT_FOUND for a space that is not the caller's).",
  errors: ["NOT_FOUND"],
  input: z.strictObject({ spaceId, name }),
  output: botView,
});

export const botList = defineContract({
  name: "bot/list",
  auth: "token",
  summary: "List a space's bots",
  description:
    "The bots of one of the caller's spaces: named by `spaceId`, or by `computerId` for the space of one of the caller's computers (so a view of that computer need not read it first). NOT_FOUND for a space or computer that is not the caller's.",
  errors: ["NOT_FOUND"],
  input: z.union([z.strictObject({ spaceId }), z.strictObject({ computerId })]),
  output: z.array(botView),
});

const tokenKind = z.enum(API_TOKEN_KINDS);

export const tokenCreate = defineContract({
  name: "token/create",
  auth: "token",
  summary: "Create an API token",
  description:
    "A further token for the caller. `web_session` is the web app's sign-in (it expires, 12 hours unless `ttlSeconds` says otherwise); an `api` token lasts until revoked unless given `ttlSeconds`. The secret is in the answer once; only its hash is stored.",
  errors: [],
  input: z.strictObject({
    name,
    kind: tokenKind.optional(),
    ttlSeconds: z
      .number()
      .int()
      .min(60)
      .max(366 * 24 * 3600)
      .optional(),
  }),
  /** The secret is shown once; only its hash is stored. */
  output: z.strictObject({
    id: z.string(),
    token: z.string(),
    kind: tokenKind,
    expiresAt: timestamp.nullable(),
  }),
});

export const tokenList = defineContract({
  name: "token/list",
  auth: "token",
  summary: "List your tokens",
  description: "The caller's live tokens (never a secret); `current` marks the one making this call.",
  errors: [],
  input: z.strictObject({}),
  output: z.array(
    z.strictObject({
      id: z.string(),
      name: z.string(),
      kind: tokenKind,
      createdAt: timestamp,
      lastUsedAt: timestamp.nullable(),
      expiresAt: timestamp.nullable(),
      current: z.boolean(),
    }),
  ),
});

export const tokenRevoke = defineContract({
  name: "token/revoke",
  auth: "token",
  summary: "Revoke a token",
  description:
    "Revokes one of the caller's own tokens; with an empty body (`{}`, no `tokenId`) it revokes the token making this call (the web app's sign-out), which is refused from then on. Another person's token answers NOT_FOUND, as a missing one does.",
  errors: ["NOT_FOUND"],
  input: z.strictObject({ tokenId: tokenId.optional() }),
  output: z.strictObject({ revoked: z.literal(true), tokenId: z.string() }),
});
