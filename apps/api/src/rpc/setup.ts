import { setupBootstrap as contract } from "@rakazo/api-contract";
import { bootstrapFirstUser } from "@rakazo/services";
import { defineRpc, withoutCaller } from "./define.ts";

/** First-run setup: the first user, their space, a bot and an API token (shown once). */
export const setupBootstrap = defineRpc(contract, withoutCaller(bootstrapFirstUser));
