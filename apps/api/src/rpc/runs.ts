import * as contracts from "@rakazo/api-contract";
import {
  endRun,
  getRun,
  heartbeatRun,
  releaseControl,
  requestTakeover,
  startRun,
  stopBot,
  takeControl,
} from "@rakazo/services";
import { defineRpc } from "./define.ts";

export const runStart = defineRpc(contracts.runStart, (ctx, caller, input) => startRun(ctx, caller, input));

export const runGet = defineRpc(contracts.runGet, (ctx, caller, input) => getRun(ctx, caller, input));

export const runHeartbeat = defineRpc(contracts.runHeartbeat, (ctx, caller, input) =>
  heartbeatRun(ctx, caller, input),
);

export const runRequestTakeover = defineRpc(contracts.runRequestTakeover, (ctx, caller, input) =>
  requestTakeover(ctx, caller, input),
);

export const runComplete = defineRpc(contracts.runComplete, (ctx, caller, input) =>
  endRun(ctx, caller, { ...input, outcome: "complete" }),
);
export const runFail = defineRpc(contracts.runFail, (ctx, caller, input) =>
  endRun(ctx, caller, { ...input, outcome: "fail" }),
);
export const runCancel = defineRpc(contracts.runCancel, (ctx, caller, input) =>
  endRun(ctx, caller, { ...input, outcome: "cancel" }),
);

export const computerTakeControl = defineRpc(
  contracts.computerTakeControl,
  (ctx, caller, input) => takeControl(ctx, caller, input),
  {
    activity: (input, outcome) => ({
      computerId: input.computerId,
      botId: input.botId,
      line: "take_control",
      ...(outcome.ok ? { details: { expiresAt: new Date(outcome.result.expiresAt).toISOString() } } : {}),
    }),
  },
);

export const computerReleaseControl = defineRpc(
  contracts.computerReleaseControl,
  (ctx, caller, input) => releaseControl(ctx, caller, input),
  {
    activity: (input, outcome) => ({
      computerId: input.computerId,
      botId: input.botId,
      line: "release_control",
      ...(outcome.ok ? { details: { resumedRunId: outcome.result.resumedRunId } } : {}),
    }),
  },
);

export const computerStopBot = defineRpc(
  contracts.computerStopBot,
  (ctx, caller, input) => stopBot(ctx, caller, input),
  {
    activity: (input, outcome) => ({
      computerId: input.computerId,
      botId: input.botId,
      line: "stop_bot",
      ...(outcome.ok ? { details: { canceledRunId: outcome.result.canceledRunId } } : {}),
    }),
  },
);
