import * as contracts from "@rakazo/api-contract";
import {
  createComputer,
  deleteComputer,
  execComputer,
  getComputer,
  listComputers,
  startComputer,
  stopComputer,
} from "@rakazo/services";
import { defineRpc } from "./define.ts";

export const computerCreate = defineRpc(contracts.computerCreate, (ctx, caller, input) =>
  createComputer(ctx, caller, input),
);

export const computerGet = defineRpc(contracts.computerGet, (ctx, caller, input) =>
  getComputer(ctx, caller, input),
);

export const computerList = defineRpc(contracts.computerList, (ctx, caller, input) =>
  listComputers(ctx, caller, input),
);

export const computerExec = defineRpc(contracts.computerExec, (ctx, caller, input) =>
  execComputer(ctx, caller, input),
);

export const computerStop = defineRpc(contracts.computerStop, (ctx, caller, input) =>
  stopComputer(ctx, caller, input),
);

export const computerStart = defineRpc(contracts.computerStart, (ctx, caller, input) =>
  startComputer(ctx, caller, input),
);

export const computerDelete = defineRpc(contracts.computerDelete, (ctx, caller, input) =>
  deleteComputer(ctx, caller, input),
);
