import * as contracts from "@rakazo/api-contract";
import {
  actExternalBrowser,
  createOrAdoptExternal,
  destroyExternalComputer,
  externalExec,
  getExternalComputerState,
  killExternalProcess,
  listExternalComputers,
  navigateExternalBrowser,
  observeExternalScreen,
  readExternalFile,
  readExternalProcess,
  shellLine,
  snapshotExternalBrowser,
  startExternalProcess,
  writeExternalFile,
} from "@rakazo/services";
import { defineRpc } from "./define.ts";

// The external surface (issue 19): the caller is the deployment's service account (app.ts).

export const externalComputerCreate = defineRpc(contracts.externalComputerCreate, (ctx, _caller, input) =>
  createOrAdoptExternal(ctx, { key: input.key ?? input.screen, screen: input.screen, wait: input.wait }),
);

export const externalComputerList = defineRpc(contracts.externalComputerList, (ctx) =>
  listExternalComputers(ctx),
);

export const externalComputerState = defineRpc(contracts.externalComputerState, (ctx, _caller, input) =>
  getExternalComputerState(ctx, input),
);

export const externalComputerExec = defineRpc(
  contracts.externalComputerExec,
  (ctx, _caller, input) => externalExec(ctx, input),
  {
    activity: (input, outcome) => {
      const command = shellLine(input.argv);
      const base = { computerId: input.computerId, command };
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
  },
);

export const externalFileRead = defineRpc(contracts.externalFileRead, (ctx, _caller, input) =>
  readExternalFile(ctx, input),
);

export const externalFileWrite = defineRpc(
  contracts.externalFileWrite,
  (ctx, _caller, input) => writeExternalFile(ctx, input),
  { activity: (input) => ({ computerId: input.computerId, line: `wrote ${input.path}` }) },
);

export const externalComputerObserve = defineRpc(contracts.externalComputerObserve, (ctx, _caller, input) =>
  observeExternalScreen(ctx, input),
);

export const externalBrowserNavigate = defineRpc(
  contracts.externalBrowserNavigate,
  (ctx, _caller, input) => navigateExternalBrowser(ctx, input),
  { activity: (input) => ({ computerId: input.computerId, line: `browser: open ${input.url}` }) },
);

export const externalBrowserSnapshot = defineRpc(contracts.externalBrowserSnapshot, (ctx, _caller, input) =>
  snapshotExternalBrowser(ctx, input).then((snapshot) => ({ ...snapshot, elements: [...snapshot.elements] })),
);

export const externalBrowserAct = defineRpc(
  contracts.externalBrowserAct,
  (ctx, _caller, input) =>
    actExternalBrowser(ctx, input).then((result) => ({ ...result, downloads: [...result.downloads] })),
  {
    activity: (input) => ({
      computerId: input.computerId,
      line: `browser: ${input.actions.length} action(s)`,
    }),
  },
);

export const externalComputerDestroy = defineRpc(contracts.externalComputerDestroy, (ctx, _caller, input) =>
  destroyExternalComputer(ctx, input),
);

export const externalProcessStart = defineRpc(
  contracts.externalProcessStart,
  (ctx, _caller, input) => startExternalProcess(ctx, input),
  {
    activity: (input) => ({
      computerId: input.computerId,
      command: shellLine(input.argv),
      line: `$ ${shellLine(input.argv)} &`,
    }),
  },
);

export const externalProcessRead = defineRpc(contracts.externalProcessRead, (ctx, _caller, input) =>
  readExternalProcess(ctx, input).then((read) => ({ ...read, chunks: [...read.chunks] })),
);

export const externalProcessKill = defineRpc(
  contracts.externalProcessKill,
  (ctx, _caller, input) => killExternalProcess(ctx, input),
  {
    activity: (input) => ({
      computerId: input.computerId,
      line: `kill -${input.signal.slice(3)} (background command)`,
    }),
  },
);
