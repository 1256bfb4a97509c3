/**
 * The RPC contract: every RPC's name, auth, input and output schema. The API binds handlers
 * to these entries, `packages/client` derives its types from them, `GET /openapi.json` is
 * generated from them, and tests/api/registry-*.test.ts run one case per entry.
 */
import type { z } from "zod";
import type { RpcContract } from "./define.ts";
import { computerActivity } from "./rpc/activity.ts";
import { agentRun } from "./rpc/agent.ts";
import {
  computerCreate,
  computerDelete,
  computerExec,
  computerGet,
  computerList,
  computerStart,
  computerStop,
} from "./rpc/computer.ts";
import { computerAct, computerObserve } from "./rpc/desktop.ts";
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
} from "./rpc/external.ts";
import {
  computerAttachmentsDownload,
  computerAttachmentsList,
  computerFilesDownload,
  computerFilesList,
  computerFilesRead,
  computerFilesUpload,
  computerFilesWrite,
} from "./rpc/files.ts";
import { approvalDecide, approvalList, botPolicyGet, botPolicySet } from "./rpc/guard.ts";
import {
  botCreate,
  botList,
  spaceCreate,
  spaceList,
  tokenCreate,
  tokenList,
  tokenRevoke,
} from "./rpc/identity.ts";
import {
  inviteAccept,
  inviteCreate,
  inviteList,
  inviteRedeem,
  inviteRevoke,
  memberList,
  memberRemove,
  memberSetRole,
} from "./rpc/members.ts";
import { computerSetNetwork } from "./rpc/network.ts";
import {
  computerOperationsList,
  computerRecover,
  computerReleaseInterrupted,
  computerUpdate,
} from "./rpc/operations.ts";
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
} from "./rpc/runs.ts";
import { computerRevokeScreenUrl, computerScreenUrl } from "./rpc/screens.ts";
import { setupBootstrap } from "./rpc/setup.ts";
import { computerTerminalUrl } from "./rpc/terminal.ts";
import { agentStatus, runList, runTranscript, runWaiting } from "./rpc/transcripts.ts";

export { defineContract, type RpcContract, timestamp } from "./define.ts";
export * from "./rpc/activity.ts";
export * from "./rpc/agent.ts";
export * from "./rpc/computer.ts";
export * from "./rpc/desktop.ts";
export * from "./rpc/external.ts";
export * from "./rpc/files.ts";
export * from "./rpc/guard.ts";
export * from "./rpc/identity.ts";
export * from "./rpc/members.ts";
export * from "./rpc/network.ts";
export * from "./rpc/operations.ts";
export * from "./rpc/runs.ts";
export * from "./rpc/screens.ts";
export * from "./rpc/setup.ts";
export * from "./rpc/terminal.ts";
export * from "./rpc/transcripts.ts";

export const RPC_CONTRACTS = [
  setupBootstrap,
  spaceCreate,
  spaceList,
  botCreate,
  botList,
  botPolicyGet,
  botPolicySet,
  tokenCreate,
  tokenList,
  tokenRevoke,
  memberList,
  memberSetRole,
  memberRemove,
  inviteCreate,
  inviteList,
  inviteRevoke,
  inviteAccept,
  inviteRedeem,
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
  approvalList,
  approvalDecide,
  agentStatus,
  runTranscript,
  runList,
  runWaiting,
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
] as const;

type AnyContract = (typeof RPC_CONTRACTS)[number];

/** Every RPC name, e.g. `"computer/get"`. */
export type RpcName = AnyContract["name"];
/** RPC name → its contract (the type clients are built from). */
export type RpcContracts = { [C in AnyContract as C["name"]]: C };
/** What a caller sends (defaults still optional). */
export type RpcInput<N extends RpcName> = z.input<RpcContracts[N]["input"]>;
/** What a caller receives in `result`. */
export type RpcOutput<N extends RpcName> = z.output<RpcContracts[N]["output"]>;

/** Name → contract, for lookups at runtime. */
export const RPC_CONTRACT_BY_NAME: ReadonlyMap<string, RpcContract> = new Map(
  RPC_CONTRACTS.map((contract) => [contract.name, contract]),
);

/** The external computer surface's RPC names: what `EXTERNAL_COMPUTER_TOKEN` may call. */
export type ExternalRpcName = Extract<RpcName, `external/${string}`>;
