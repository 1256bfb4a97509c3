import { z } from "zod";
import { botId, computerId, defineContract, spaceId } from "../define.ts";
import {
  commandFields,
  computerDetails,
  computerMode,
  computerView,
  execFields,
  execResult,
  networkPolicy,
} from "../views.ts";

const byId = z.strictObject({ computerId });

export const computerCreate = defineContract({
  name: "computer/create",
  auth: "token",
  input: z.strictObject({
    spaceId,
    name: z.string().trim().min(1).max(100).optional(),
    mode: computerMode.default("team"),
    botId: botId.optional(),
    // The size: within the deployment's maximum (RAKAZO_COMPUTER_MAX_*), else INVALID_INPUT. A
    // space past a quota (RAKAZO_SPACE_MAX_*) refuses the computer with QUOTA_EXCEEDED.
    size: z
      .strictObject({
        memoryMib: z.number().int().min(256).optional(),
        cpus: z.number().min(0.1).optional(),
        pids: z.number().int().min(64).optional(),
      })
      .optional(),
    // The network policy: the deployment's default (COMPUTER_NETWORK) when absent; UNSUPPORTED when the
    // provider cannot enforce it.
    network: networkPolicy.optional(),
  }),
  output: computerView,
});

export const computerGet = defineContract({
  name: "computer/get",
  auth: "token",
  input: byId,
  output: computerDetails,
});

export const computerList = defineContract({
  name: "computer/list",
  auth: "token",
  input: z.strictObject({ spaceId }),
  output: z.array(computerView),
});

export const computerExec = defineContract({
  name: "computer/exec",
  auth: "token",
  input: z.strictObject({
    computerId,
    ...commandFields,
    ...execFields,
    lease: z.strictObject({ botId, fencingToken: z.number().int().positive() }).optional(),
  }),
  output: execResult,
});

export const computerStop = defineContract({
  name: "computer/stop",
  auth: "token",
  input: byId,
  output: computerView,
});

export const computerStart = defineContract({
  name: "computer/start",
  auth: "token",
  input: byId,
  output: computerView,
});

export const computerDelete = defineContract({
  name: "computer/delete",
  auth: "token",
  input: byId,
  output: computerView,
});
