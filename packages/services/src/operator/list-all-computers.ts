/** Operator verb (`./rakazo computers`): every computer of the installation, oldest first. */
import { computers } from "@rakazo/db";
import { asc, ne } from "drizzle-orm";
import { type ComputerView, toComputerView } from "../computers/view.ts";
import type { ServiceContext } from "../context.ts";

export async function listAllComputers(ctx: Pick<ServiceContext, "db">): Promise<ComputerView[]> {
  const rows = await ctx.db
    .select()
    .from(computers)
    .where(ne(computers.state, "deleted"))
    .orderBy(asc(computers.createdAt));
  return rows.map(toComputerView);
}
