import type { computerOperations } from "@rakazo/db";

export type OperationRow = typeof computerOperations.$inferSelect;

/** What clients and operators see of an operation (OPS-2): real stages, never percentages. */
export interface OperationView {
  readonly id: string;
  readonly computerId: string;
  readonly kind: OperationRow["kind"];
  readonly stage: string;
  readonly status: OperationRow["status"];
  readonly error: string | null;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly finishedAt: string | null;
}

export function toOperationView(row: OperationRow): OperationView {
  return {
    id: row.id,
    computerId: row.computerId,
    kind: row.kind,
    stage: row.stage,
    status: row.status,
    error: row.error,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    finishedAt: row.finishedAt?.toISOString() ?? null,
  };
}
