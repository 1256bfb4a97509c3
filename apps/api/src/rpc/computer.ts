import * as contracts from "@rakazo/api-contract";
import {
  createComputer,
  deleteComputer,
  execComputer,
  getComputer,
  listComputers,
  shellLine,
  startComputer,
  stopComputer,
} from "@rakazo/services";
import { defineRpc, execActivity } from "./define.ts";

export const computerCreate = defineRpc(contracts.computerCreate, createComputer);

export const computerGet = defineRpc(contracts.computerGet, getComputer);

export const computerList = defineRpc(contracts.computerList, listComputers);

export const computerExec = defineRpc(contracts.computerExec, execComputer, {
  activity: (input, outcome) => {
    const command = shellLine(input.argv);
    // Env values and stdin may be secrets: only their names and size are kept.
    const details = {
      ...(input.cwd !== undefined ? { cwd: input.cwd } : {}),
      ...(input.env !== undefined ? { envNames: Object.keys(input.env) } : {}),
      ...(input.stdin !== undefined ? { stdinChars: input.stdin.length } : {}),
    };
    return execActivity(
      { computerId: input.computerId, botId: input.lease?.botId ?? null, command, details },
      outcome,
    );
  },
});

export const computerStop = defineRpc(contracts.computerStop, stopComputer);

export const computerStart = defineRpc(contracts.computerStart, startComputer);

export const computerDelete = defineRpc(contracts.computerDelete, deleteComputer);
