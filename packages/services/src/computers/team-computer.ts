/**
 * Every space gets one Team Computer by default (CMP-1). Its row is written with the space, in
 * state `unprovisioned`: no machine exists until the first call that needs one (first-use.ts),
 * so an idle space costs nothing.
 */
import { computers, newId } from "@rakazo/db";
import type { NetworkPolicy } from "@rakazo/sandbox";
import type { ServiceContext } from "../context.ts";
import { storedPolicy } from "./network.ts";

export const TEAM_COMPUTER_NAME = "Team Computer";

/** Inserts the space's Team Computer; returns its id. `db` may be a transaction. */
export async function insertTeamComputer(
  db: ServiceContext["db"],
  input: { spaceId: string; providerKind: string; network?: NetworkPolicy | undefined },
): Promise<string> {
  const id = newId("computer");
  await db.insert(computers).values({
    id,
    spaceId: input.spaceId,
    name: TEAM_COMPUTER_NAME,
    mode: "team",
    ownerBotId: null,
    providerKind: input.providerKind,
    state: "unprovisioned",
    homeKey: id.replace(/^cmp_/, "home_"),
    // The deployment's default, stored so a later change of the default moves nothing.
    network: input.network ? storedPolicy(input.network) : null,
  });
  return id;
}
