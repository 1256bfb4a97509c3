import * as contracts from "@rakazo/api-contract";
import {
  listComputerOperations,
  releaseInterruptedOperation,
  requestComputerRecover,
  requestComputerUpdate,
} from "@rakazo/services";
import { defineRpc } from "./define.ts";

export const computerOperationsList = defineRpc(contracts.computerOperationsList, (ctx, caller, input) =>
  listComputerOperations(ctx, caller, input),
);

export const computerReleaseInterrupted = defineRpc(
  contracts.computerReleaseInterrupted,
  (ctx, caller, input) => releaseInterruptedOperation(ctx, caller, input),
);

export const computerUpdate = defineRpc(contracts.computerUpdate, (ctx, caller, input) =>
  requestComputerUpdate(ctx, caller, input),
);

export const computerRecover = defineRpc(contracts.computerRecover, (ctx, caller, input) =>
  requestComputerRecover(ctx, caller, input),
);
