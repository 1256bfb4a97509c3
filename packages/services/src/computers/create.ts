import { type ComputerMode, computers, newId } from "@rakazo/db";
import type { NetworkPolicy } from "@rakazo/sandbox";
import type { Caller, ServiceContext } from "../context.ts";
import { AppError } from "../errors.ts";
import { requireBotInSpace, requireMembership } from "../identity/spaces.ts";
import { defaultComputerName } from "./names.ts";
import { resolveCreatePolicy, storedPolicy } from "./network.ts";
import { enqueueOperation, recordOperation } from "./operations.ts";
import { assertWithinSpaceQuota } from "./quota.ts";
import { type ComputerSize, DEFAULT_SIZING, resolveSize } from "./sizing.ts";
import { type ComputerView, toComputerView } from "./view.ts";

export interface CreateComputerInput {
  readonly spaceId: string;
  readonly name?: string;
  readonly mode: ComputerMode;
  /** Required for a private computer: the bot whose whole workspace it is (CMP-1). */
  readonly botId?: string;
  /** Overrides the deployment's default size, within its maximum. */
  readonly size?: Partial<ComputerSize>;
  /** The network policy; the deployment's default (`COMPUTER_NETWORK`) when absent. */
  readonly network?: NetworkPolicy;
}

/** Records the computer and queues its provisioning; the worker brings it to `running`. */
export async function createComputer(
  ctx: ServiceContext,
  caller: Caller,
  input: CreateComputerInput,
): Promise<ComputerView> {
  await requireMembership(ctx, caller, input.spaceId);
  if (input.mode === "private") {
    if (!input.botId) throw new AppError("INVALID_INPUT", "a private computer needs botId");
    await requireBotInSpace(ctx, input.spaceId, input.botId);
  }
  const { row, operationId } = await ctx.db.transaction(async (tx) =>
    insertComputer(tx, ctx, {
      spaceId: input.spaceId,
      name: input.name ?? (await defaultComputerName(tx, input.spaceId, input.mode)),
      mode: input.mode,
      ownerBotId: input.mode === "private" ? (input.botId ?? null) : null,
      ...(input.size ? { size: input.size } : {}),
      ...(input.network ? { network: input.network } : {}),
    }),
  );
  await enqueueOperation(ctx, "computer.provision", row.id, operationId);
  ctx.log.info("computer.created", { computerId: row.id, spaceId: input.spaceId, mode: input.mode });
  return toComputerView(row);
}

type Transaction = Parameters<Parameters<ServiceContext["db"]["transaction"]>[0]>[0];

/**
 * Inserts a provisioning computer and its queued provision operation inside the caller's
 * transaction; the caller enqueues the job after commit. Shared by `computer/create` and the
 * external surface's create-or-adopt, which holds a per-key lock around it. A space
 * at its quota of computers, memory or CPUs refuses it (QUOTA_EXCEEDED, ./quota.ts).
 */
export async function insertComputer(
  tx: Transaction,
  ctx: Pick<ServiceContext, "provider" | "sizing" | "networkDefault" | "quotas">,
  input: {
    readonly spaceId: string;
    readonly name: string;
    readonly mode: ComputerMode;
    readonly ownerBotId: string | null;
    readonly size?: Partial<ComputerSize>;
    readonly network?: NetworkPolicy;
  },
): Promise<{ row: typeof computers.$inferSelect; operationId: string }> {
  const size = resolveSize(ctx.sizing ?? DEFAULT_SIZING, input.size);
  const network = resolveCreatePolicy(ctx, input.network);
  const id = newId("computer");
  const [row] = await tx
    .insert(computers)
    .values({
      id,
      spaceId: input.spaceId,
      name: input.name,
      mode: input.mode,
      ownerBotId: input.ownerBotId,
      providerKind: ctx.provider.kind,
      state: "provisioning",
      homeKey: id.replace(/^cmp_/, "home_"),
      memoryMib: size.memoryMib,
      cpuMillis: Math.round(size.cpus * 1000),
      pidsLimit: size.pids,
      diskMib: size.diskMib,
      network: storedPolicy(network),
    })
    .returning();
  if (!row) throw new AppError("INTERNAL", "computer insert returned nothing");
  await assertWithinSpaceQuota(tx, ctx, {
    spaceId: input.spaceId,
    computerId: id,
    quotas: ["computers", "memoryMib", "cpus"],
  });
  const operationId = await recordOperation(tx, id, "provision", "queued");
  return { row, operationId };
}
