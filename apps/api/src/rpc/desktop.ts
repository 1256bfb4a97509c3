import * as contracts from "@rakazo/api-contract";
import { actOnDesktop, observeDesktop } from "@rakazo/services";
import { defineRpc } from "./define.ts";

export const computerObserve = defineRpc(contracts.computerObserve, (ctx, caller, input) =>
  observeDesktop(ctx, caller, input),
);

export const computerAct = defineRpc(contracts.computerAct, (ctx, caller, input) =>
  actOnDesktop(ctx, caller, input),
);
