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
import { LIFECYCLE_ERRORS } from "./error-sets.ts";

const byId = z.strictObject({ computerId });

export const computerCreate = defineContract({
  name: "computer/create",
  auth: "token",
  summary: "Create a computer",
  description:
    "A new computer in one of the caller's spaces, provisioned in the background (poll `computer/get` until `running`). `size` must fit the deployment's maximum (RAKAZO_COMPUTER_MAX_*, else INVALID_INPUT); a space past a quota (RAKAZO_SPACE_MAX_*) refuses it with QUOTA_EXCEEDED; a network policy the provider cannot enforce is UNSUPPORTED.",
  errors: ["NOT_FOUND", "QUOTA_EXCEEDED", "UNSUPPORTED"],
  input: z.strictObject({
    spaceId,
    name: z
      .string()
      .trim()
      .min(1)
      .max(100)
      .optional()
      .describe(
        'Kept as given, even where another computer of the space has it. Absent: a name no other computer of the space has, "Team Computer" (or "Private Computer") first, then "Computer N".',
      ),
    mode: computerMode.default("team"),
    botId: botId.optional(),
    size: z
      .strictObject({
        memoryMib: z.number().int().min(256).optional(),
        cpus: z.number().min(0.1).optional(),
        pids: z.number().int().min(64).optional(),
        diskMib: z.number().int().min(64).optional().describe("The home's disk (Docker with home disks on)."),
      })
      .optional()
      .describe(
        "Within the deployment's maximum (RAKAZO_COMPUTER_MAX_*), else INVALID_INPUT. A space past a quota (RAKAZO_SPACE_MAX_*) refuses the computer with QUOTA_EXCEEDED.",
      ),
    network: networkPolicy
      .optional()
      .describe(
        "The deployment's default (COMPUTER_NETWORK) when absent; UNSUPPORTED when the provider cannot enforce it.",
      ),
  }),
  output: computerView,
});

export const computerGet = defineContract({
  name: "computer/get",
  auth: "token",
  summary: "Get a computer",
  description:
    "One computer of the caller's spaces with its details. A foreign id answers NOT_FOUND exactly like a missing one.",
  errors: ["NOT_FOUND"],
  input: byId,
  output: computerDetails,
});

export const computerList = defineContract({
  name: "computer/list",
  auth: "token",
  summary: "List a space's computers",
  description: "The computers of one of the caller's spaces.",
  errors: ["NOT_FOUND"],
  input: z.strictObject({ spaceId }),
  output: z.array(computerView),
});

export const computerExec = defineContract({
  name: "computer/exec",
  auth: "token",
  summary: "Run a command",
  description:
    "Runs one argv command (no shell; spell out `bash -lc`) on a running computer and answers its exit code and output. With `lease` it runs as that bot under its execution lease (STALE_LEASE when the fencing token was superseded); a computer that is not running answers COMPUTER_NOT_READY.",
  errors: [
    "COMPUTER_GONE",
    "COMPUTER_NOT_READY",
    "DESKTOP_UNAVAILABLE",
    "FILE_NOT_FOUND",
    "FILE_TOO_LARGE",
    "INVALID_PATH",
    "MULTI_SCREEN_UNAVAILABLE",
    "NOT_FOUND",
    "PROCESS_LIMIT",
    "PROVIDER_ERROR",
    "QUOTA_EXCEEDED",
    "STALE_LEASE",
    "UNSUPPORTED",
  ],
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
  summary: "Stop a computer",
  description:
    "Stops a running computer, saving its workspace first; queued as an operation. Wrong state is CONFLICT (`details.state`); an update or recovery in progress is OPERATION_IN_PROGRESS.",
  errors: LIFECYCLE_ERRORS,
  input: byId,
  output: computerView,
});

export const computerStart = defineContract({
  name: "computer/start",
  auth: "token",
  summary: "Start a computer",
  description:
    "Starts a stopped computer from its saved workspace; queued as an operation. Wrong state is CONFLICT; a space quota may refuse it (QUOTA_EXCEEDED).",
  errors: LIFECYCLE_ERRORS,
  input: byId,
  output: computerView,
});

export const computerDelete = defineContract({
  name: "computer/delete",
  auth: "token",
  summary: "Delete a computer",
  description:
    "Deletes a computer and its machine; idempotent within the caller's space (a deleted computer answers success with state `deleted`); a foreign or unknown id is NOT_FOUND.",
  errors: LIFECYCLE_ERRORS,
  input: byId,
  output: computerView,
});
