import { agentRun as contract } from "@rakazo/api-contract";
import { startAgentRun } from "@rakazo/services";
import { defineRpc } from "./define.ts";

/** Starts an agent (one Pi session in the worker) on a bot's computer; returns its run. */
export const agentRun = defineRpc(contract, startAgentRun);
