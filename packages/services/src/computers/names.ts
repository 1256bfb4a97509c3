/**
 * A new computer's name when `computer/create` gives none: unique among the space's computers
 * that are not deleted, so two computers never read alike by default. The first is "Team
 * Computer" (or "Private Computer"); once that is taken, "Computer N", N the computer's place in
 * the space (a space holding two computers gets "Computer 3"), counted on past names in use.
 * An explicit name is kept as given, even where another computer has it (docs/decisions.md).
 */
import { type ComputerMode, computers } from "@rakazo/db";
import { and, eq, ne, sql } from "drizzle-orm";
import type { ServiceContext } from "../context.ts";
import { TEAM_COMPUTER_NAME } from "./team-computer.ts";

type Tx = Parameters<Parameters<ServiceContext["db"]["transaction"]>[0]>[0];

export async function defaultComputerName(tx: Tx, spaceId: string, mode: ComputerMode): Promise<string> {
  // The space's quota lock (./quota.ts), taken again by the insert's quota check in the same
  // transaction: two creates in one space pick their names one after the other.
  await tx.execute(
    sql`select pg_advisory_xact_lock(hashtextextended(${`rakazo-space-quota:${spaceId}`}, 0))`,
  );
  const rows = await tx
    .select({ name: computers.name })
    .from(computers)
    .where(and(eq(computers.spaceId, spaceId), ne(computers.state, "deleted")));
  const taken = new Set(rows.map((row) => row.name.trim().toLowerCase()));
  const first = mode === "team" ? TEAM_COMPUTER_NAME : "Private Computer";
  if (!taken.has(first.toLowerCase())) return first;
  for (let n = Math.max(2, rows.length + 1); ; n++) {
    const name = `Computer ${n}`;
    if (!taken.has(name.toLowerCase())) return name;
  }
}
