import * as contracts from "@rakazo/api-contract";
import {
  actExternalBrowser,
  createOrAdoptExternal,
  destroyExternalComputer,
  externalExec,
  getExternalComputerState,
  listExternalComputers,
  navigateExternalBrowser,
  observeExternalScreen,
  readExternalFile,
  shellLine,
  snapshotExternalBrowser,
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
