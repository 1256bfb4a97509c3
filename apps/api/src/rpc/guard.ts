import * as contracts from "@rakazo/api-contract";
import { decideApproval, getBotPolicy, listApprovals, setBotPolicy } from "@rakazo/services";
import { defineRpc } from "./define.ts";

export const botPolicyGet = defineRpc(contracts.botPolicyGet, getBotPolicy);

export const botPolicySet = defineRpc(contracts.botPolicySet, setBotPolicy);

export const approvalList = defineRpc(contracts.approvalList, listApprovals);

/** The decision's Activity line is the service's own (it names the person and the action). */
export const approvalDecide = defineRpc(contracts.approvalDecide, decideApproval);
