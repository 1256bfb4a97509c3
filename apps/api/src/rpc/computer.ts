import {
  createComputer,
  deleteComputer,
  execComputer,
  getComputer,
  listComputers,
  startComputer,
  stopComputer,
} from "@rakazo/services";
import { z } from "zod";
import { defineRpc, ids } from "./define.ts";

const computerId = z.string().regex(ids.computer, "expected a computer id (cmp_…)");
const byId = z.strictObject({ computerId });

export const computerCreate = defineRpc({
  name: "computer/create",
  auth: "token",
  input: z.strictObject({
    spaceId: z.string().regex(ids.space, "expected a space id (spc_…)"),
    name: z.string().trim().min(1).max(100).optional(),
    mode: z.enum(["team", "private"]).default("team"),
    botId: z.string().regex(ids.bot).optional(),
    // Issue 12: within the deployment's maximum (RAKAZO_COMPUTER_MAX_*), else INVALID_INPUT.
    size: z
      .strictObject({
        memoryMib: z.number().int().min(256).optional(),
        cpus: z.number().min(0.1).optional(),
        pids: z.number().int().min(64).optional(),
      })
      .optional(),
  }),
  handler: (ctx, caller, input) => createComputer(ctx, caller, input),
});

export const computerGet = defineRpc({
  name: "computer/get",
  auth: "token",
  input: byId,
  handler: (ctx, caller, input) => getComputer(ctx, caller, input),
});

export const computerList = defineRpc({
  name: "computer/list",
  auth: "token",
  input: z.strictObject({ spaceId: z.string().regex(ids.space) }),
  handler: (ctx, caller, input) => listComputers(ctx, caller, input),
});

export const computerExec = defineRpc({
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
  handler: (ctx, caller, input) => execComputer(ctx, caller, input),
});

export const computerStop = defineRpc({
  name: "computer/stop",
  auth: "token",
  input: byId,
  handler: (ctx, caller, input) => stopComputer(ctx, caller, input),
});

export const computerStart = defineRpc({
  name: "computer/start",
  auth: "token",
  input: byId,
  handler: (ctx, caller, input) => startComputer(ctx, caller, input),
});

export const computerDelete = defineRpc({
  name: "computer/delete",
  auth: "token",
  input: byId,
  handler: (ctx, caller, input) => deleteComputer(ctx, caller, input),
});
