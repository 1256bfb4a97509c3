import { builtOnce, computers, spaceMembers } from "@rakazo/db";
import { and, eq, sql } from "drizzle-orm";
import type { Caller, ServiceContext } from "../context.ts";
import { AppError } from "../errors.ts";

export type ComputerRow = typeof computers.$inferSelect;

/**
 * The computer, if the caller is a member of the space that owns it. A foreign or deleted
 * computer answers NOT_FOUND exactly like a missing one (no existence oracle).
 */
export async function requireComputer(
  ctx: Pick<ServiceContext, "db">,
  caller: Caller,
  computerId: string,
): Promise<ComputerRow> {
  const computer = await requireComputerEvenDeleted(ctx, caller, computerId);
  if (computer.state === "deleted") throw new AppError("NOT_FOUND", "computer not found");
  return computer;
}

/**
 * Like `requireComputer`, but a deleted computer of the caller's own space is returned (for
 * idempotent deletes). Foreign and never-existing ids are still NOT_FOUND.
 */
// Nearly every computer verb runs this first: built once per database handle.
const computerOfMember = builtOnce((db) =>
  db
    .select({ computer: computers })
    .from(computers)
    .innerJoin(
      spaceMembers,
      and(eq(spaceMembers.spaceId, computers.spaceId), eq(spaceMembers.userId, sql.placeholder("userId"))),
    )
    .where(eq(computers.id, sql.placeholder("computerId")))
    .limit(1)
    .prepare("computer_of_member"),
);

export async function requireComputerEvenDeleted(
  ctx: Pick<ServiceContext, "db">,
  caller: Caller,
  computerId: string,
): Promise<ComputerRow> {
  const [row] = await computerOfMember(ctx.db).execute({ userId: caller.userId, computerId });
  if (!row) throw new AppError("NOT_FOUND", "computer not found");
  return row.computer;
}

/** The computer's machine, which must be running and belong to the configured provider. */
export function requireRunningMachine(ctx: Pick<ServiceContext, "provider">, computer: ComputerRow) {
  if (computer.state !== "running" || !computer.providerRef) {
    throw new AppError("COMPUTER_NOT_READY", `computer is ${computer.state}, not running`, {
      state: computer.state,
    });
  }
  if (computer.providerKind !== ctx.provider.kind) {
    // PRV-3: a ref is only ever passed back to its own kind; a restart provisions a replacement.
    throw new AppError(
      "COMPUTER_NOT_READY",
      "computer belongs to another provider; start it again to move it",
      {
        state: computer.state,
      },
    );
  }
  return ctx.provider.sandbox(computer.providerRef);
}
