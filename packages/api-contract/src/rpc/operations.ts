import { OPERATION_KINDS, OPERATION_STATUSES } from "@rakazo/db/states";
import { z } from "zod";
import { computerId, defineContract, operationId, timestamp } from "../define.ts";
import { computerView } from "../views.ts";

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
  input: z.strictObject({ computerId }),
  output: z.array(operationView),
});

const byComputer = z.strictObject({ computerId });

/** Rebuilds a running computer with the configured provider and image (OPS-1, OPS-3). */
export const computerUpdate = defineContract({
  name: "computer/update",
  auth: "token",
  input: byComputer,
  output: operationView,
});

/** Brings a failed computer back from its last saved workspace (OPS-3). */
export const computerRecover = defineContract({
  name: "computer/recover",
  auth: "token",
  input: byComputer,
  output: operationView,
});

export const computerReleaseInterrupted = defineContract({
  name: "computer/releaseInterrupted",
  auth: "token",
  input: z.strictObject({
    id: operationId,
    // Optional in the schema so that leaving it out is refused with its own code
    // (WORKERS_STOPPED_REQUIRED), not a generic INVALID_INPUT (OPS-6).
    workersStopped: z.boolean().optional(),
  }),
  output: z.strictObject({ operation: operationView, computer: computerView }),
});
