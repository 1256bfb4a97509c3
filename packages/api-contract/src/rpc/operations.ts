import { OPERATION_KINDS, OPERATION_STATUSES } from "@rakazo/db/states";
import { z } from "zod";
import { computerId, defineContract, operationId, timestamp } from "../define.ts";
import { computerView } from "../views.ts";
import { LIFECYCLE_ERRORS } from "./error-sets.ts";

/** A lifecycle operation (OPS-1/OPS-2): real stages, never percentages. */
export const operationView = z.strictObject({
  id: z.string(),
  computerId: z.string(),
  kind: z.enum(OPERATION_KINDS),
  stage: z.string(),
  status: z.enum(OPERATION_STATUSES),
  error: z.string().nullable(),
  createdAt: timestamp,
  updatedAt: timestamp,
  finishedAt: timestamp.nullable(),
});

export const computerOperationsList = defineContract({
  name: "computer/operations",
  auth: "token",
  summary: "List a computer's operations",
  description:
    "The computer's lifecycle operations (create, stop, start, update, recover) with their stages and status, newest first: the active ones (queued, running, interrupted) and failures of the last week; with `history: true`, its last 50 whatever their outcome.",
  errors: ["NOT_FOUND"],
  input: z.strictObject({
    computerId,
    history: z
      .boolean()
      .optional()
      .describe(
        "Also the finished operations (succeeded, released, older failures): the last 50 of any status.",
      ),
  }),
  output: z.array(operationView),
});

const byComputer = z.strictObject({ computerId });

export const computerUpdate = defineContract({
  name: "computer/update",
  auth: "token",
  summary: "Rebuild a computer",
  description:
    "Rebuilds a running computer with the configured provider and image, keeping its workspace; queued as an operation that reserves the computer until it ends.",
  errors: LIFECYCLE_ERRORS,
  input: byComputer,
  output: operationView,
});

export const computerRecover = defineContract({
  name: "computer/recover",
  auth: "token",
  summary: "Recover a failed computer",
  description:
    "Brings a failed computer back from its last saved workspace; queued as an operation. Work not saved before the failure may be lost.",
  errors: LIFECYCLE_ERRORS,
  input: byComputer,
  output: operationView,
});

export const computerReleaseInterrupted = defineContract({
  name: "computer/releaseInterrupted",
  auth: "token",
  summary: "Release an interrupted operation",
  description:
    "Marks an interrupted operation `released` and its computer `failed`, so `computer/recover` can bring it back. Only the server owner (the installation's first user, else NOT_SERVER_OWNER), for an operation of a space they own, and only with `workersStopped: true` asserting that its workers and provider calls have stopped (else WORKERS_STOPPED_REQUIRED).",
  errors: [
    "NOT_FOUND",
    "NOT_SERVER_OWNER",
    "OPERATION_IN_OTHER_SPACE",
    "OPERATION_NOT_INTERRUPTED",
    "WORKERS_STOPPED_REQUIRED",
  ],
  input: z.strictObject({
    id: operationId,
    // Optional in the schema so that leaving it out is refused with its own code
    // (WORKERS_STOPPED_REQUIRED), not a generic INVALID_INPUT (OPS-6).
    workersStopped: z
      .boolean()
      .optional()
      .describe("Must be true: asserts that the operation's workers and provider calls have stopped."),
  }),
  output: z.strictObject({ operation: operationView, computer: computerView }),
});
