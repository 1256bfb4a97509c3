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
import { defineRpc } from "./define.ts";

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
    const base = { computerId: input.computerId, botId: input.lease?.botId ?? null, command, details };
    if (!outcome.ok) return { ...base, line: `$ ${command}` };
    const { exitCode, stdout, stderr, timedOut } = outcome.result;
    return {
      ...base,
      line: `$ ${command} → exit ${exitCode}${timedOut ? " (timed out)" : ""}`,
      exitCode,
      output: stdout + (stderr ? `${stdout ? "\n" : ""}${stderr}` : ""),
      ok: exitCode === 0 && !timedOut,
    };
  },
});

export const computerStop = defineRpc(contracts.computerStop, stopComputer);

export const computerStart = defineRpc(contracts.computerStart, startComputer);

export const computerDelete = defineRpc(contracts.computerDelete, deleteComputer);
