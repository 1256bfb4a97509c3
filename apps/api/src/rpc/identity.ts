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

export const spaceCreate = defineRpc(contracts.spaceCreate, createSpace);

export const spaceList = defineRpc(contracts.spaceList, listSpaces);

export const botCreate = defineRpc(contracts.botCreate, createBot);

export const botList = defineRpc(contracts.botList, listBots);

export const tokenCreate = defineRpc(contracts.tokenCreate, createApiToken);

export const tokenList = defineRpc(contracts.tokenList, listApiTokens);

export const tokenRevoke = defineRpc(contracts.tokenRevoke, revokeApiToken);
