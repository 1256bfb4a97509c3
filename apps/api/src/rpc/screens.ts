import * as contracts from "@rakazo/api-contract";
import { revokeScreenUrl, screenUrl } from "@rakazo/services";
import { defineRpc } from "./define.ts";

export const computerScreenUrl = defineRpc(contracts.computerScreenUrl, (ctx, caller, input) =>
  screenUrl(ctx, caller, input),
);

export const computerRevokeScreenUrl = defineRpc(contracts.computerRevokeScreenUrl, (ctx, caller, input) =>
  revokeScreenUrl(ctx, caller, input),
);
