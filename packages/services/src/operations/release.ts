/**
 * Releasing an interrupted operation (OPS-6). Only the server owner may, only with the explicit
 * assertion that workers and provider calls have stopped (a stale heartbeat alone authorizes
 * nothing), and only for an interrupted operation in a space the owner owns. The operation
 * becomes `released` (never written by a worker again) and the computer, still in the
 * transitional state the operation left, becomes `failed` — from which `computer/start` brings
 * it back up from its last saved workspace: that is the recovery offered afterwards.
 *
 * The server owner is the installation's first user — the one `setup/bootstrap` created (or the
 * launcher's first run) — until the operator transfers it (../identity/server-owner.ts).
 */
import { type ComputerState, computerOperations, computers, spaceMembers } from "@rakazo/db";
import { and, eq, inArray, sql } from "drizzle-orm";
import { type ComputerView, toComputerView } from "../computers/view.ts";
import type { ServiceContext } from "../context.ts";
import { AppError } from "../errors.ts";
import { requireServerOwner } from "../identity/server-owner.ts";
import { type OperationView, toOperationView } from "./view.ts";

export const RELEASED_COMPUTER_ERROR =
  "an interrupted operation was released; start the computer to recover it from its last saved workspace (work not saved before the interruption may be lost)";

export async function releaseInterruptedOperation(
  ctx: Pick<ServiceContext, "db" | "log">,
  caller: { userId: string },
  input: { id: string; workersStopped?: boolean | undefined },
): Promise<{ operation: OperationView; computer: ComputerView }> {
  if (input.workersStopped !== true) {
    throw new AppError(
      "WORKERS_STOPPED_REQUIRED",
      "releasing needs the explicit assertion that every worker and provider call of this operation has stopped: send workersStopped: true",
    );
  }
  await requireServerOwner(ctx, caller.userId);
  const [found] = await ctx.db
    .select({ operation: computerOperations, spaceId: computers.spaceId })
    .from(computerOperations)
    .innerJoin(computers, eq(computers.id, computerOperations.computerId))
    .where(eq(computerOperations.id, input.id))
    .limit(1);
  if (!found) throw new AppError("NOT_FOUND", "operation not found");
  const [owned] = await ctx.db
    .select({ spaceId: spaceMembers.spaceId })
    .from(spaceMembers)
    .where(
      and(
        eq(spaceMembers.spaceId, found.spaceId),
        eq(spaceMembers.userId, caller.userId),
        eq(spaceMembers.role, "owner"),
      ),
    )
    .limit(1);
  if (!owned) {
    throw new AppError("OPERATION_IN_OTHER_SPACE", "this operation belongs to a space you do not own");
  }
  if (found.operation.status !== "interrupted") {
    throw new AppError(
      "OPERATION_NOT_INTERRUPTED",
      `operation is ${found.operation.status}, not interrupted`,
      {
        status: found.operation.status,
      },
    );
  }
  const result = await ctx.db.transaction(async (tx) => {
    const [operation] = await tx
      .update(computerOperations)
      .set({ status: "released", finishedAt: sql`now()` })
      .where(and(eq(computerOperations.id, input.id), eq(computerOperations.status, "interrupted")))
      .returning();
    if (!operation) return undefined;
    // An update interrupted while checkpointing left the computer `running` on a machine in an
    // unknown state: it is handed to recovery like the others.
    const left = [
      "provisioning",
      "stopping",
      "deleting",
      ...(operation.kind === "update" ? ["running"] : []),
    ];
    await tx
      .update(computers)
      .set({ state: "failed", lastError: RELEASED_COMPUTER_ERROR })
      .where(and(eq(computers.id, operation.computerId), inArray(computers.state, left as ComputerState[])));
    const [computer] = await tx.select().from(computers).where(eq(computers.id, operation.computerId));
    return computer ? { operation, computer } : undefined;
  });
  if (!result) throw new AppError("OPERATION_NOT_INTERRUPTED", "operation is no longer interrupted");
  ctx.log.warn("operation.released", {
    operationId: input.id,
    computerId: result.computer.id,
    userId: caller.userId,
  });
  return { operation: toOperationView(result.operation), computer: toComputerView(result.computer) };
}
