import * as contracts from "@rakazo/api-contract";
import {
  acceptInvite,
  createInvite,
  listInvites,
  listMembers,
  redeemInvite,
  removeMember,
  revokeInvite,
  setMemberRole,
} from "@rakazo/services";
import { defineRpc, withoutCaller } from "./define.ts";

export const memberList = defineRpc(contracts.memberList, listMembers);

export const memberSetRole = defineRpc(contracts.memberSetRole, setMemberRole);

export const memberRemove = defineRpc(contracts.memberRemove, removeMember);

export const inviteCreate = defineRpc(contracts.inviteCreate, createInvite);

export const inviteList = defineRpc(contracts.inviteList, listInvites);

export const inviteRevoke = defineRpc(contracts.inviteRevoke, revokeInvite);

export const inviteAccept = defineRpc(contracts.inviteAccept, acceptInvite);

/** The invite code in the body is the credential: no caller (apps/api/src/app.ts). */
export const inviteRedeem = defineRpc(contracts.inviteRedeem, withoutCaller(redeemInvite));
