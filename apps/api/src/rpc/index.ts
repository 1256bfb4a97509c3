import {
  computerCreate,
  computerDelete,
  computerExec,
  computerGet,
  computerList,
  computerStart,
  computerStop,
} from "./computer.ts";
import type { RpcDefinition } from "./define.ts";
import { botCreate, botList, spaceCreate, spaceList, tokenCreate } from "./identity.ts";
import { setupBootstrap } from "./setup.ts";

export const RPCS: readonly RpcDefinition[] = [
  setupBootstrap,
  spaceCreate,
  spaceList,
  botCreate,
  botList,
  tokenCreate,
  computerCreate,
  computerGet,
  computerList,
  computerExec,
  computerStop,
  computerStart,
  computerDelete,
] as RpcDefinition[];
