import { z } from "zod";
import { defineContract, ids } from "../define.ts";
import { computerDetails, computerView, networkPolicy } from "../views.ts";

const computerId = z.string().regex(ids.computer, "expected a computer id (cmp_…)");
const byId = z.strictObject({ computerId });

export const computerCreate = defineContract({
  name: "computer/create",
  auth: "token",
  input: z.strictObject({
    spaceId: z.string().regex(ids.space, "expected a space id (spc_…)"),
    name: z.string().trim().min(1).max(100).optional(),
    mode: z.enum(["team", "private"]).default("team"),
    botId: z.string().regex(ids.bot).optional(),
    // Issue 12: within the deployment's maximum (RAKAZO_COMPUTER_MAX_*), else INVALID_INPUT. A
    // space past a quota (RAKAZO_SPACE_MAX_*) refuses the computer with QUOTA_EXCEEDED.
    size: z
      .strictObject({
        memoryMib: z.number().int().min(256).optional(),
        cpus: z.number().min(0.1).optional(),
        pids: z.number().int().min(64).optional(),
      })
      .optional(),
    // Issue 16: the deployment's default (COMPUTER_NETWORK) when absent; UNSUPPORTED when the
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
  input: z.strictObject({ spaceId: z.string().regex(ids.space) }),
  output: z.array(computerView),
});

export const computerExec = defineContract({
  name: "computer/exec",
  auth: "token",
  input: z.strictObject({
    computerId,
    argv: z.array(z.string().max(100_000)).min(1).max(1_000),
    cwd: z.string().max(4_096).optional(),
    env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), z.string()).optional(),
    stdin: z.string().max(10_000_000).optional(),
    timeoutMs: z.number().int().min(1).max(600_000).optional(),
    lease: z
      .strictObject({ botId: z.string().regex(ids.bot), fencingToken: z.number().int().positive() })
      .optional(),
  }),
  output: z.strictObject({
    exitCode: z.number().int(),
    stdout: z.string(),
    stderr: z.string(),
    timedOut: z.boolean(),
    truncated: z.boolean(),
  }),
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
