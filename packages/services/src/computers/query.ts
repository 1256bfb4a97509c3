import { computers } from "@rakazo/db";
import { and, asc, eq, ne, sql } from "drizzle-orm";
import type { Caller, ServiceContext } from "../context.ts";
import { requireMembership } from "../identity/spaces.ts";
import { requireComputer } from "./access.ts";
import { computerTools, type ProbedTool } from "./tools.ts";
import { type ComputerView, toComputerView } from "./view.ts";

/** `computer/get`: the view plus which promised tools the machine really has (PRV-5). */
export interface ComputerDetails extends ComputerView {
  /** Found by probing the running machine; null while none runs or it cannot say. */
  readonly tools: readonly ProbedTool[] | null;
}

export async function getComputer(
  ctx: ServiceContext,
  caller: Caller,
  input: { computerId: string },
): Promise<ComputerDetails> {
  const row = await requireComputer(ctx, caller, input.computerId);
  return { ...toComputerView(row), tools: await computerTools(ctx, row) };
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
    // CMP-1: the Team Computer first (the space's own is its oldest team computer).
    .orderBy(sql`${computers.mode} = 'team' desc`, asc(computers.createdAt));
  return rows.map(toComputerView);
}
