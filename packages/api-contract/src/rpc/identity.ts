import { z } from "zod";
import { defineContract, spaceId } from "../define.ts";

const name = z.string().trim().min(1).max(100);
const spaceView = z.strictObject({ id: z.string(), name: z.string(), role: z.enum(["owner", "member"]) });
const botView = z.strictObject({ id: z.string(), spaceId: z.string(), name: z.string() });

export const spaceCreate = defineContract({
  name: "space/create",
  auth: "token",
  input: z.strictObject({ name }),
  output: spaceView,
});

export const spaceList = defineContract({
  name: "space/list",
  auth: "token",
  input: z.strictObject({}),
  output: z.array(spaceView),
});

export const botCreate = defineContract({
  name: "bot/create",
  auth: "token",
  input: z.strictObject({ spaceId, name }),
  output: botView,
});

export const botList = defineContract({
  name: "bot/list",
  auth: "token",
  input: z.strictObject({ spaceId }),
  output: z.array(botView),
});

export const tokenCreate = defineContract({
  name: "token/create",
  auth: "token",
  input: z.strictObject({ name }),
  /** The secret is shown once; only its hash is stored. */
  output: z.strictObject({ id: z.string(), token: z.string() }),
});

/** Revokes the token that makes this call (the web app's sign-out); it is refused from then on. */
export const tokenRevoke = defineContract({
  name: "token/revoke",
  auth: "token",
  input: z.strictObject({}),
  output: z.strictObject({ revoked: z.literal(true), tokenId: z.string() }),
});
