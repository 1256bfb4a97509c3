import { createApiToken, createBot, createSpace, listBots, listSpaces } from "@rakazo/services";
import { z } from "zod";
import { defineRpc, ids } from "./define.ts";

const name = z.string().trim().min(1).max(100);

export const spaceCreate = defineRpc({
  name: "space/create",
  auth: "token",
  input: z.strictObject({ name }),
  handler: (ctx, caller, input) => createSpace(ctx, caller, input),
});

export const spaceList = defineRpc({
  name: "space/list",
  auth: "token",
  input: z.strictObject({}),
  handler: (ctx, caller) => listSpaces(ctx, caller),
});

export const botCreate = defineRpc({
  name: "bot/create",
  auth: "token",
  input: z.strictObject({ spaceId: z.string().regex(ids.space), name }),
  handler: (ctx, caller, input) => createBot(ctx, caller, input),
});

export const botList = defineRpc({
  name: "bot/list",
  auth: "token",
  input: z.strictObject({ spaceId: z.string().regex(ids.space) }),
  handler: (ctx, caller, input) => listBots(ctx, caller, input),
});

export const tokenCreate = defineRpc({
  name: "token/create",
  auth: "token",
  input: z.strictObject({ name }),
  handler: (ctx, caller, input) => createApiToken(ctx, caller, input),
});
