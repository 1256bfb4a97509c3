/** FIL-1: browse and preview a computer's files, live when it runs, stored when it does not. */
import * as contracts from "@rakazo/api-contract";
import { listComputerFiles, readComputerFile } from "@rakazo/services";
import { defineRpc } from "./define.ts";

export const computerFilesList = defineRpc(contracts.computerFilesList, (ctx, caller, input) =>
  listComputerFiles(ctx, caller, input),
);

export const computerFilesRead = defineRpc(contracts.computerFilesRead, (ctx, caller, input) =>
  readComputerFile(ctx, caller, input),
);
