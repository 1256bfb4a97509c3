/**
 * Operator verb (`./rakazo ops recover <id>`): brings a failed computer back up from its last
 * saved workspace — the recovery offered after `ops release` (OPS-6). `id` is the computer or
 * one of its operations. The recovery operation (computer.recover) is committed `queued` and the worker's
 * reconciler publishes its job (OPS-4), so the command needs no queue connection of its own.
 */
import { computerOperations, computers } from "@rakazo/db";
import { and, eq } from "drizzle-orm";
import { recordOperation } from "../computers/operations.ts";
import type { ServiceContext } from "../context.ts";
import { AppError } from "../errors.ts";

export async function requestComputerRecovery(
  ctx: Pick<ServiceContext, "db" | "log">,
  input: { id: string },
): Promise<{ computerId: string; operationId: string }> {
  let computerId = input.id;
  if (input.id.startsWith("op_")) {
    const [op] = await ctx.db
      .select({ computerId: computerOperations.computerId })
      .from(computerOperations)
      .where(eq(computerOperations.id, input.id))
      .limit(1);
    if (!op) throw new AppError("NOT_FOUND", `no operation ${input.id}`);
    computerId = op.computerId;
  }
  const operationId = await ctx.db.transaction(async (tx) => {
    const [row] = await tx
      .update(computers)
      .set({ state: "provisioning", lastError: null })
      .where(and(eq(computers.id, computerId), eq(computers.state, "failed")))
      .returning({ id: computers.id });
    return row ? recordOperation(tx, computerId, "recover", "queued") : undefined;
  });
  if (!operationId) {
    const [current] = await ctx.db
      .select({ state: computers.state })
      .from(computers)
      .where(eq(computers.id, computerId))
      .limit(1);
    if (!current) throw new AppError("NOT_FOUND", `no computer ${computerId}`);
    throw new AppError(
      "CONFLICT",
      `computer ${computerId} is ${current.state}; only a failed computer is recovered (release its interrupted operation first)`,
      { state: current.state },
    );
  }
  ctx.log.info("computer.recovery_requested", { computerId, operationId });
  return { computerId, operationId };
}
