import * as contracts from "@rakazo/api-contract";
import {
  runHistory,
  agentStatus as statusOf,
  runTranscript as transcriptOf,
  waitingRuns,
} from "@rakazo/services";
import { defineRpc, withoutCaller } from "./define.ts";

export const runTranscript = defineRpc(contracts.runTranscript, transcriptOf);

export const runList = defineRpc(contracts.runList, runHistory);

export const runWaiting = defineRpc(contracts.runWaiting, waitingRuns);

export const agentStatus = defineRpc(contracts.agentStatus, withoutCaller(statusOf));
