import * as contracts from "@rakazo/api-contract";
import {
  listComputerOperations,
  releaseInterruptedOperation,
  requestComputerRecover,
  requestComputerUpdate,
} from "@rakazo/services";
import { defineRpc } from "./define.ts";

export const computerOperationsList = defineRpc(contracts.computerOperationsList, listComputerOperations);

export const computerReleaseInterrupted = defineRpc(
  contracts.computerReleaseInterrupted,
  releaseInterruptedOperation,
);

export const computerUpdate = defineRpc(contracts.computerUpdate, requestComputerUpdate);

export const computerRecover = defineRpc(contracts.computerRecover, requestComputerRecover);
