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
  /** The computer's size; null for computers made before sizing (provider defaults). */
  readonly size: {
    readonly memoryMib: number;
    readonly cpus: number;
    readonly pids: number;
    readonly diskMib?: number;
  } | null;
  /** The network policy it runs under; `none` for computers made before policies. */
  readonly network: NonNullable<ComputerRow["network"]>;
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
    size:
      row.memoryMib !== null && row.cpuMillis !== null && row.pidsLimit !== null
        ? {
            memoryMib: row.memoryMib,
            cpus: row.cpuMillis / 1000,
            pids: row.pidsLimit,
            ...(row.diskMib !== null ? { diskMib: row.diskMib } : {}),
          }
        : null,
    network: row.network ?? { mode: "none" },
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
