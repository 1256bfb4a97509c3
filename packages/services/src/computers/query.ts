import { computers } from "@rakazo/db";
import { and, asc, eq, ne } from "drizzle-orm";
import type { Caller, ServiceContext } from "../context.ts";
import { requireMembership } from "../identity/spaces.ts";
import { requireComputer } from "./access.ts";
import { type ComputerView, toComputerView } from "./view.ts";

export async function getComputer(
  ctx: ServiceContext,
  caller: Caller,
  input: { computerId: string },
): Promise<ComputerView> {
  return toComputerView(await requireComputer(ctx, caller, input.computerId));
}

export async function listComputers(
  ctx: ServiceContext,
  caller: Caller,
  input: { spaceId: string },
): Promise<ComputerView[]> {
  await requireMembership(ctx, caller, input.spaceId);
  const rows = await ctx.db
    .select()
    .from(computers)
    .where(and(eq(computers.spaceId, input.spaceId), ne(computers.state, "deleted")))
    .orderBy(asc(computers.createdAt));
  return rows.map(toComputerView);
}
