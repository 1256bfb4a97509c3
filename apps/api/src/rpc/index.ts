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
import { computerAct, computerObserve } from "./desktop.ts";
import { botCreate, botList, spaceCreate, spaceList, tokenCreate } from "./identity.ts";
import {
  computerReleaseControl,
  computerStopBot,
  computerTakeControl,
  runCancel,
  runComplete,
  runFail,
  runGet,
  runHeartbeat,
  runRequestTakeover,
  runStart,
} from "./runs.ts";
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
  computerObserve,
  computerAct,
  computerTakeControl,
  computerReleaseControl,
  computerStopBot,
  runStart,
  runGet,
  runHeartbeat,
  runRequestTakeover,
  runComplete,
  runFail,
  runCancel,
] as RpcDefinition[];
