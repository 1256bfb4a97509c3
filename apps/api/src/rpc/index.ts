import { RPC_CONTRACTS, type RpcContracts, type RpcName } from "@rakazo/api-contract";
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
import { approvalDecide, approvalList, botPolicyGet, botPolicySet } from "./guard.ts";
import {
  botCreate,
  botList,
  spaceCreate,
  spaceList,
  tokenCreate,
  tokenList,
  tokenRevoke,
} from "./identity.ts";
import {
  inviteAccept,
  inviteCreate,
  inviteList,
  inviteRedeem,
  inviteRevoke,
  memberList,
  memberRemove,
  memberSetRole,
} from "./members.ts";
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
import { computerRevokeScreenUrl, computerScreenUrl } from "./screens.ts";
import { setupBootstrap } from "./setup.ts";
import { computerTerminalUrl } from "./terminal.ts";
import { agentStatus, runList, runTranscript, runWaiting } from "./transcripts.ts";

/**
 * Every served RPC by name: one handler per contract in @rakazo/api-contract. The type makes
 * the map exhaustive — a contract without a handler, a handler under a name the contract lacks
 * or under another RPC's name fails to compile.
 */
const HANDLERS: { readonly [N in RpcName]: RpcDefinition<RpcContracts[N]> } = {
  "setup/bootstrap": setupBootstrap,
  "space/create": spaceCreate,
  "space/list": spaceList,
  "bot/create": botCreate,
  "bot/list": botList,
  "bot/policy/get": botPolicyGet,
  "bot/policy/set": botPolicySet,
  "token/create": tokenCreate,
  "token/list": tokenList,
  "token/revoke": tokenRevoke,
  "member/list": memberList,
  "member/setRole": memberSetRole,
  "member/remove": memberRemove,
  "invite/create": inviteCreate,
  "invite/list": inviteList,
  "invite/revoke": inviteRevoke,
  "invite/accept": inviteAccept,
  "invite/redeem": inviteRedeem,
  "computer/create": computerCreate,
  "computer/get": computerGet,
  "computer/list": computerList,
  "computer/exec": computerExec,
  "computer/stop": computerStop,
  "computer/start": computerStart,
  "computer/setNetwork": computerSetNetwork,
  "computer/delete": computerDelete,
  "computer/observe": computerObserve,
  "computer/act": computerAct,
  "computer/files/list": computerFilesList,
  "computer/files/read": computerFilesRead,
  "computer/files/download": computerFilesDownload,
  "computer/files/upload": computerFilesUpload,
  "computer/files/write": computerFilesWrite,
  "computer/attachments/list": computerAttachmentsList,
  "computer/attachments/download": computerAttachmentsDownload,
  "computer/activity": computerActivity,
  "computer/takeControl": computerTakeControl,
  "computer/releaseControl": computerReleaseControl,
  "computer/stopBot": computerStopBot,
  "computer/operations": computerOperationsList,
  "computer/releaseInterrupted": computerReleaseInterrupted,
  "computer/update": computerUpdate,
  "computer/recover": computerRecover,
  "run/start": runStart,
  "run/get": runGet,
  "run/heartbeat": runHeartbeat,
  "run/requestTakeover": runRequestTakeover,
  "run/complete": runComplete,
  "run/fail": runFail,
  "run/cancel": runCancel,
  "agent/run": agentRun,
  "approval/list": approvalList,
  "approval/decide": approvalDecide,
  "agent/status": agentStatus,
  "run/transcript": runTranscript,
  "run/list": runList,
  "run/waiting": runWaiting,
  "computer/screenUrl": computerScreenUrl,
  "computer/revokeScreenUrl": computerRevokeScreenUrl,
  "computer/terminalUrl": computerTerminalUrl,
  "external/computer/create": externalComputerCreate,
  "external/computer/list": externalComputerList,
  "external/computer/state": externalComputerState,
  "external/computer/exec": externalComputerExec,
  "external/file/read": externalFileRead,
  "external/file/write": externalFileWrite,
  "external/computer/observe": externalComputerObserve,
  "external/browser/navigate": externalBrowserNavigate,
  "external/browser/snapshot": externalBrowserSnapshot,
  "external/browser/act": externalBrowserAct,
  "external/computer/destroy": externalComputerDestroy,
  "external/process/start": externalProcessStart,
  "external/process/read": externalProcessRead,
  "external/process/kill": externalProcessKill,
};

/** The handlers in the contract's order (which is also the order of /openapi.json's paths). */
export const RPCS: readonly RpcDefinition[] = RPC_CONTRACTS.map((contract) => HANDLERS[contract.name]);
