/**
 * Lifecycle requests from clients: each moves the computer to a transitional state with a
 * conditional update (so two racing requests cannot both win) and queues the durable job.
 */
import { type ComputerState, computers, type OperationKind } from "@rakazo/db";
import type { JobName } from "@rakazo/jobs";
import { and, eq, inArray } from "drizzle-orm";
import type { Caller, ServiceContext } from "../context.ts";
import { AppError } from "../errors.ts";
import { assertNotReserved } from "../operations/reservation.ts";
import { requireComputer, requireComputerEvenDeleted } from "./access.ts";
import { enqueueOperation, recordOperation } from "./operations.ts";
import { assertWithinSpaceQuota } from "./quota.ts";
import { type ComputerView, toComputerView } from "./view.ts";

interface Transition {
  readonly from: readonly ComputerState[];
  readonly to: ComputerState;
  readonly operation: OperationKind;
  readonly job: JobName;
}

const TRANSITIONS = {
  stop: { from: ["running"], to: "stopping", operation: "stop", job: "computer.stop" },
  start: {
    from: ["unprovisioned", "stopped", "failed"],
    to: "provisioning",
    operation: "provision",
    job: "computer.provision",
  },
  delete: {
    from: ["unprovisioned", "provisioning", "running", "stopping", "stopped", "failed", "deleting"],
    to: "deleting",
    operation: "delete",
    job: "computer.delete",
  },
} as const satisfies Record<string, Transition>;

async function transition(
  ctx: ServiceContext,
  caller: Caller,
  computerId: string,
  verb: keyof typeof TRANSITIONS,
): Promise<ComputerView> {
  const spec: Transition = TRANSITIONS[verb];
  const current = await requireComputer(ctx, caller, computerId);
  // OPS-1: stop and start wait for an update or recovery; delete always wins.
  if (verb !== "delete") await assertNotReserved(ctx, computerId);
  const result = await ctx.db.transaction(async (tx) => {
    const [row] = await tx
      .update(computers)
      .set({ state: spec.to, lastError: null })
      .where(and(eq(computers.id, computerId), inArray(computers.state, [...spec.from])))
      .returning();
    if (!row) return undefined;
    // A start gives the computer a machine: its size counts toward the space's quotas.
    if (verb === "start") {
      await assertWithinSpaceQuota(tx, ctx, {
        spaceId: row.spaceId,
        computerId,
        quotas: ["memoryMib", "cpus"],
      });
    }
    const operationId = await recordOperation(tx, computerId, spec.operation, "queued");
    return { row, operationId };
  });
  if (!result) {
    throw new AppError("CONFLICT", `cannot ${verb} a computer that is ${current.state}`, {
      state: current.state,
    });
  }
  await enqueueOperation(ctx, spec.job, computerId, result.operationId);
  ctx.log.info(`computer.${verb}_requested`, { computerId });
  return toComputerView(result.row);
}

export const stopComputer = (ctx: ServiceContext, caller: Caller, input: { computerId: string }) =>
  transition(ctx, caller, input.computerId, "stop");

export const startComputer = (ctx: ServiceContext, caller: Caller, input: { computerId: string }) =>
  transition(ctx, caller, input.computerId, "start");

/**
 * Idempotent: deleting a computer of the caller's space that is already deleted succeeds and
 * returns it (state `deleted`, no new operation). Foreign or unknown ids stay NOT_FOUND.
 */
export async function deleteComputer(
  ctx: ServiceContext,
  caller: Caller,
  input: { computerId: string },
): Promise<ComputerView> {
  const current = await requireComputerEvenDeleted(ctx, caller, input.computerId);
  if (current.state === "deleted") return toComputerView(current);
  return transition(ctx, caller, input.computerId, "delete");
}
