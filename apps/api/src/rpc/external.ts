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
import { defineRpc, execActivity, withoutCaller } from "./define.ts";

// The external surface: the caller is the deployment's service account (app.ts).

export const externalComputerCreate = defineRpc(contracts.externalComputerCreate, (ctx, _caller, input) =>
  createOrAdoptExternal(ctx, { key: input.key ?? input.screen, screen: input.screen, wait: input.wait }),
);

export const externalComputerList = defineRpc(
  contracts.externalComputerList,
  withoutCaller(listExternalComputers),
);

export const externalComputerState = defineRpc(
  contracts.externalComputerState,
  withoutCaller(getExternalComputerState),
);

export const externalComputerExec = defineRpc(contracts.externalComputerExec, withoutCaller(externalExec), {
  activity: (input, outcome) => {
    const command = shellLine(input.argv);
    return execActivity({ computerId: input.computerId, command }, outcome);
  },
});

export const externalFileRead = defineRpc(contracts.externalFileRead, withoutCaller(readExternalFile));

export const externalFileWrite = defineRpc(contracts.externalFileWrite, withoutCaller(writeExternalFile), {
  activity: (input) => ({ computerId: input.computerId, line: `wrote ${input.path}` }),
});

export const externalComputerObserve = defineRpc(
  contracts.externalComputerObserve,
  withoutCaller(observeExternalScreen),
);

export const externalBrowserNavigate = defineRpc(
  contracts.externalBrowserNavigate,
  withoutCaller(navigateExternalBrowser),
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

export const externalComputerDestroy = defineRpc(
  contracts.externalComputerDestroy,
  withoutCaller(destroyExternalComputer),
);

export const externalProcessStart = defineRpc(
  contracts.externalProcessStart,
  withoutCaller(startExternalProcess),
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
  withoutCaller(killExternalProcess),
  {
    activity: (input) => ({
      computerId: input.computerId,
      line: `kill -${input.signal.slice(3)} (background command)`,
    }),
  },
);
