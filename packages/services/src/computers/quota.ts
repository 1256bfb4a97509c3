/**
 * Per-space quotas: how many computers a space may have, and how much memory and CPU its
 * computers may hold at once, so one tenant cannot take the whole host however it sizes or
 * multiplies its computers.
 *
 * What counts:
 * - computers: every computer not yet `deleted` (the Team Computer too, from its space's
 *   creation; a computer being deleted still counts until its machine is gone).
 * - memory and CPU: the size of every computer that holds a machine or is getting one
 *   (`provisioning`, `running`, `stopping`). A stopped, failed, unprovisioned or deleting
 *   computer holds none (or is giving it up for good). A computer without a stored size
 *   (the Team Computer, computers made before sizing) counts the deployment's default size,
 *   which is what its provider gives it.
 *
 * What must stay true: every change that adds to a space's usage — a new computer, and every
 * transition into `provisioning` from a state that holds no machine (start, a Team Computer's
 * first use, recovery) — calls `assertWithinSpaceQuota` in the same transaction, right after its
 * write. The call takes a transaction-scoped lock keyed by the space before it sums, so two such
 * changes in one space are serialized and the second one's sum sees the first one's row: two
 * creates racing for the last slot cannot both commit. Nothing after the call in the
 * transaction may wait for a row lock (that would order locks both ways). Changes that only
 * lower usage (stop, delete) and moves that keep a machine counted (update, a machine replaced
 * while running) take no lock.
 */
import { computers } from "@rakazo/db";
import { sql } from "drizzle-orm";
import type { ServiceContext } from "../context.ts";
import { AppError } from "../errors.ts";
import { DEFAULT_SIZING } from "./sizing.ts";

export const SPACE_QUOTAS = ["computers", "memoryMib", "cpus"] as const;
export type SpaceQuotaName = (typeof SPACE_QUOTAS)[number];

/** The most each space may use; `null` is no limit (an operator's explicit 0). */
export type SpaceQuotaPolicy = { readonly [Q in SpaceQuotaName]: number | null };

/**
 * Used when a deployment configures nothing (tests, embedded use): 20 computers, and eight
 * computers of DEFAULT_SIZING's default size running at once (32 GiB, 16 CPUs), which also
 * leaves room for two of its largest.
 */
export const DEFAULT_SPACE_QUOTAS: SpaceQuotaPolicy = { computers: 20, memoryMib: 32_768, cpus: 16 };

/** States whose computer holds a machine or is getting one: what memory and CPU quotas count. */
const MACHINE_STATES = ["provisioning", "running", "stopping"] as const;

type Tx = Parameters<Parameters<ServiceContext["db"]["transaction"]>[0]>[0];

const REFUSAL: Record<SpaceQuotaName, (n: { limit: number; used: number; requested: number }) => string> = {
  computers: ({ limit, used }) =>
    `this space already has ${used} computers, and its limit is ${limit} (RAKAZO_SPACE_MAX_COMPUTERS); delete one first`,
  memoryMib: ({ limit, used, requested }) =>
    `this computer's ${requested} MiB would bring this space's running computers to ${used + requested} MiB, over its limit of ${limit} MiB (RAKAZO_SPACE_MAX_MEMORY_MIB); stop a computer first`,
  cpus: ({ limit, used, requested }) =>
    `this computer's ${requested} CPUs would bring this space's running computers to ${used + requested} CPUs, over its limit of ${limit} (RAKAZO_SPACE_MAX_CPUS); stop a computer first`,
};

/**
 * Refuses with QUOTA_EXCEEDED — and so rolls back the caller's transaction — when the space is
 * over one of `quotas` now that `computerId` was created or moved to `provisioning` in `tx`.
 * `details`: `{ quota, limit, used, requested }`, where `used` is the rest of the space and
 * `requested` is this computer's share (1 computer, its MiB, its CPUs).
 */
export async function assertWithinSpaceQuota(
  tx: Tx,
  ctx: Pick<ServiceContext, "quotas" | "sizing">,
  input: {
    readonly spaceId: string;
    readonly computerId: string;
    readonly quotas: readonly SpaceQuotaName[];
  },
): Promise<void> {
  const policy = ctx.quotas ?? DEFAULT_SPACE_QUOTAS;
  const checked = input.quotas.filter((quota) => policy[quota] !== null);
  if (checked.length === 0) return;
  const defaults = (ctx.sizing ?? DEFAULT_SIZING).defaults;
  const memory = sql`coalesce(${computers.memoryMib}, ${defaults.memoryMib})`;
  const cpuMillis = sql`coalesce(${computers.cpuMillis}, ${Math.round(defaults.cpus * 1000)})`;
  const holds = sql`${computers.state} in (${sql.join(
    MACHINE_STATES.map((s) => sql`${s}`),
    sql`, `,
  )})`;
  const own = sql`${computers.id} = ${input.computerId}`;
  await tx.execute(
    sql`select pg_advisory_xact_lock(hashtextextended(${`rakazo-space-quota:${input.spaceId}`}, 0))`,
  );
  // One statement after the lock: under read committed it sees every change committed before.
  const [row] = await tx.execute<{
    computers: number;
    memory_mib: number;
    cpu_millis: number;
    own_memory_mib: number;
    own_cpu_millis: number;
  }>(sql`
    select
      count(*) filter (where ${computers.state} <> 'deleted')::int as computers,
      coalesce(sum(${memory}) filter (where ${holds}), 0)::int as memory_mib,
      coalesce(sum(${cpuMillis}) filter (where ${holds}), 0)::int as cpu_millis,
      coalesce(sum(${memory}) filter (where ${own}), 0)::int as own_memory_mib,
      coalesce(sum(${cpuMillis}) filter (where ${own}), 0)::int as own_cpu_millis
    from ${computers}
    where ${computers.spaceId} = ${input.spaceId}`);
  if (!row) throw new AppError("INTERNAL", "the space's usage query returned nothing");
  const usage: Record<SpaceQuotaName, { total: number; requested: number }> = {
    computers: { total: row.computers, requested: 1 },
    memoryMib: { total: row.memory_mib, requested: row.own_memory_mib },
    cpus: { total: row.cpu_millis / 1000, requested: row.own_cpu_millis / 1000 },
  };
  for (const quota of checked) {
    const limit = policy[quota] as number;
    const { total, requested } = usage[quota];
    if (total <= limit) continue;
    const figures = { limit, used: round(total - requested), requested };
    throw new AppError("QUOTA_EXCEEDED", REFUSAL[quota](figures), { quota, ...figures });
  }
}

/** CPUs are summed in thousandths; a difference of two such sums is shown without float noise. */
const round = (n: number) => Math.round(n * 1000) / 1000;
