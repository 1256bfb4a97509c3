import type { RpcName } from "@rakazo/api-contract";
import { computerActivity } from "./activity.ts";
import { agentRun } from "./agent.ts";
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
import {
  externalBrowserAct,
  externalBrowserNavigate,
  externalBrowserSnapshot,
  externalComputerCreate,
  externalComputerDestroy,
  externalComputerExec,
  externalComputerList,
  externalComputerObserve,
  externalComputerState,
  externalFileRead,
  externalFileWrite,
  externalProcessKill,
  externalProcessRead,
  externalProcessStart,
} from "./external.ts";
import {
  computerAttachmentsDownload,
  computerAttachmentsList,
  computerFilesDownload,
  computerFilesList,
  computerFilesRead,
  computerFilesUpload,
  computerFilesWrite,
} from "./files.ts";
import { botCreate, botList, spaceCreate, spaceList, tokenCreate, tokenRevoke } from "./identity.ts";
import { computerSetNetwork } from "./network.ts";
import {
  computerOperationsList,
  computerRecover,
  computerReleaseInterrupted,
  computerUpdate,
} from "./operations.ts";
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
import { computerRevokeScreenUrl, computerScreenUrl, computerTerminalUrl } from "./screens.ts";
import { setupBootstrap } from "./setup.ts";

/** Every served RPC, one handler per contract in @rakazo/api-contract (checked below). */
export const RPCS = [
  setupBootstrap,
  spaceCreate,
  spaceList,
  botCreate,
  botList,
  tokenCreate,
  tokenRevoke,
  computerCreate,
  computerGet,
  computerList,
  computerExec,
  computerStop,
  computerStart,
  computerSetNetwork,
  computerDelete,
  computerObserve,
  computerAct,
  computerFilesList,
  computerFilesRead,
  computerFilesDownload,
  computerFilesUpload,
  computerFilesWrite,
  computerAttachmentsList,
  computerAttachmentsDownload,
  computerActivity,
  computerTakeControl,
  computerReleaseControl,
  computerStopBot,
  computerOperationsList,
  computerReleaseInterrupted,
  computerUpdate,
  computerRecover,
  runStart,
  runGet,
  runHeartbeat,
  runRequestTakeover,
  runComplete,
  runFail,
  runCancel,
  agentRun,
  computerScreenUrl,
  computerRevokeScreenUrl,
  computerTerminalUrl,
  externalComputerCreate,
  externalComputerList,
  externalComputerState,
  externalComputerExec,
  externalFileRead,
  externalFileWrite,
  externalComputerObserve,
  externalBrowserNavigate,
  externalBrowserSnapshot,
  externalBrowserAct,
  externalComputerDestroy,
  externalProcessStart,
  externalProcessRead,
  externalProcessKill,
] as const satisfies readonly RpcDefinition[];

// A contract without a handler (or a handler for a name the contract lacks) fails to compile.
type Served = (typeof RPCS)[number]["contract"]["name"];
const everyContractServed: [Exclude<RpcName, Served>, Exclude<Served, RpcName>] extends [never, never]
  ? true
  : false = true;
void everyContractServed;
