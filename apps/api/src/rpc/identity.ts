import * as contracts from "@rakazo/api-contract";
import {
  createApiToken,
  createBot,
  createSpace,
  listApiTokens,
  listBots,
  listSpaces,
  revokeApiToken,
} from "@rakazo/services";
import { defineRpc } from "./define.ts";

export const spaceCreate = defineRpc(contracts.spaceCreate, (ctx, caller, input) =>
  createSpace(ctx, caller, input),
);

export const spaceList = defineRpc(contracts.spaceList, (ctx, caller) => listSpaces(ctx, caller));

export const botCreate = defineRpc(contracts.botCreate, (ctx, caller, input) =>
  createBot(ctx, caller, input),
);

export const botList = defineRpc(contracts.botList, (ctx, caller, input) => listBots(ctx, caller, input));

export const tokenCreate = defineRpc(contracts.tokenCreate, (ctx, caller, input) =>
  createApiToken(ctx, caller, input),
);

export const tokenList = defineRpc(contracts.tokenList, (ctx, caller) => listApiTokens(ctx, caller));

export const tokenRevoke = defineRpc(contracts.tokenRevoke, (ctx, caller, input) =>
  revokeApiToken(ctx, caller, input),
);
