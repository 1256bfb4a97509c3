import type { ComputerRow } from "./access.ts";

/** What clients see of a computer: never the provider ref or wrapped keys. */
export interface ComputerView {
  readonly id: string;
  readonly spaceId: string;
  readonly name: string;
  readonly mode: ComputerRow["mode"];
  readonly ownerBotId: string | null;
  readonly providerKind: string;
  readonly state: ComputerRow["state"];
  readonly homeRevision: number;
  readonly lastError: string | null;
  readonly createdAt: string;
  readonly updatedAt: string;
}

export function toComputerView(row: ComputerRow): ComputerView {
  return {
    id: row.id,
    spaceId: row.spaceId,
    name: row.name,
    mode: row.mode,
    ownerBotId: row.ownerBotId,
    providerKind: row.providerKind,
    state: row.state,
    homeRevision: row.homeRevision,
    lastError: row.lastError,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
