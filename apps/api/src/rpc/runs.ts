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

export const runStart = defineRpc(contracts.runStart, startRun);

export const runGet = defineRpc(contracts.runGet, getRun);

export const runHeartbeat = defineRpc(contracts.runHeartbeat, heartbeatRun);

export const runRequestTakeover = defineRpc(contracts.runRequestTakeover, requestTakeover);

export const runComplete = defineRpc(contracts.runComplete, (ctx, caller, input) =>
  endRun(ctx, caller, { ...input, outcome: "complete" }),
);
export const runFail = defineRpc(contracts.runFail, (ctx, caller, input) =>
  endRun(ctx, caller, { ...input, outcome: "fail" }),
);
export const runCancel = defineRpc(contracts.runCancel, (ctx, caller, input) =>
  endRun(ctx, caller, { ...input, outcome: "cancel" }),
);

export const computerTakeControl = defineRpc(contracts.computerTakeControl, takeControl, {
  activity: (input, outcome) => ({
    computerId: input.computerId,
    botId: input.botId,
    line: "take_control",
    ...(outcome.ok ? { details: { expiresAt: new Date(outcome.result.expiresAt).toISOString() } } : {}),
  }),
});

export const computerReleaseControl = defineRpc(contracts.computerReleaseControl, releaseControl, {
  activity: (input, outcome) => ({
    computerId: input.computerId,
    botId: input.botId,
    line: "release_control",
    ...(outcome.ok ? { details: { resumedRunId: outcome.result.resumedRunId } } : {}),
  }),
});

export const computerStopBot = defineRpc(contracts.computerStopBot, stopBot, {
  activity: (input, outcome) => ({
    computerId: input.computerId,
    botId: input.botId,
    line: "stop_bot",
    ...(outcome.ok ? { details: { canceledRunId: outcome.result.canceledRunId } } : {}),
  }),
});
