// @rakazo/services does not export its activity/ folder from the root yet; see docs/agent-tools.md.
import { computerActivity as contract } from "@rakazo/api-contract";
import { listActivity } from "@rakazo/services";
import { defineRpc } from "./define.ts";

/** `computer/activity`: a computer's command history (TOOL-4), oldest first, paged by event id. */
export const computerActivity = defineRpc(contract, listActivity);
