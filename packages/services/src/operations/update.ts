/**
 * `computer/update` and `computer/recover` (OPS-1, OPS-3): durable jobs under the computer-wide
 * reservation (./reservation.ts). Each stage is recorded on the operation before it starts, so
 * an interrupted operation says where it stopped; handlers claim their operation conditionally
 * (beginOperation), so no stage is ever replayed by a redelivered job.
 *
 * Update: checkpointing (live work saved first, desktops quiesced) → stopping (the old machine is
 * destroyed) → provisioning (a new one from the configured provider and image) → restoring (the
 * workspace just saved) → running. Desktops start lazily on the next graphical call (CMP-4), so
 * there is no desktop stage to fake. Recovery: provisioning → restoring from the last saved
 * workspace; its failure says that unsaved work may be lost.
 */
import { computerOperations, computers } from "@rakazo/db";
import type { JobContext } from "@rakazo/jobs";
import { and, eq, sql } from "drizzle-orm";
import { requireComputer } from "../computers/access.ts";
import { markRunningIfProvisioning } from "../computers/mark-running.ts";
import {
  beginOperation,
  enqueueOperation,
  recordOperation,
  updateOperation,
} from "../computers/operations.ts";
import { provisionRequestOf } from "../computers/provision-spec.ts";
import { assertWithinSpaceQuota } from "../computers/quota.ts";
import type { Caller, ServiceContext } from "../context.ts";
import { AppError } from "../errors.ts";
import { checkpointComputerHome } from "../homes/checkpoint.ts";
import { providerMountsHome } from "../homes/context.ts";
import { releaseDesktops } from "../homes/quiesce.ts";
import { prepareComputerHome, restoreComputerHome } from "../homes/restore.ts";
import { assertNotReserved } from "./reservation.ts";
import { type OperationView, toOperationView } from "./view.ts";

export const RECOVERY_FAILED_WARNING =
  "recovery failed; recovering again starts from the last saved workspace, so work not saved before the failure may be lost";

type Verb = "update" | "recover";
const FROM: Record<Verb, "running" | "failed"> = { update: "running", recover: "failed" };

/** Can this computer be rebuilt with the configured provider and image (OPS-3)? */
export function canUpdate(
  ctx: Pick<ServiceContext, "provider">,
  row: { state: string; providerKind: string },
) {
  return row.state === "running" && row.providerKind === ctx.provider.kind;
}

async function request(
  ctx: ServiceContext,
  caller: Caller,
  computerId: string,
  verb: Verb,
): Promise<OperationView> {
  const computer = await requireComputer(ctx, caller, computerId);
  await assertNotReserved(ctx, computer.id);
  if (computer.state !== FROM[verb] || (verb === "update" && !canUpdate(ctx, computer))) {
    throw new AppError("CONFLICT", `cannot ${verb} a computer that is ${computer.state}`, {
      state: computer.state,
    });
  }
  let operationId: string | undefined;
  try {
    operationId = await ctx.db.transaction(async (tx) => {
      // Recovery moves the computer out of `failed` at once, like start; update keeps it
      // running until its stopping stage (the reservation already holds everything else off).
      if (verb === "recover") {
        const [row] = await tx
          .update(computers)
          .set({ state: "provisioning", lastError: null })
          .where(and(eq(computers.id, computer.id), eq(computers.state, "failed")))
          .returning({ id: computers.id });
        if (!row) return undefined;
        await assertWithinSpaceQuota(tx, ctx, {
          spaceId: computer.spaceId,
          computerId: computer.id,
          quotas: ["memoryMib", "cpus"],
        });
      }
      return recordOperation(tx, computer.id, verb, "queued");
    });
  } catch (error) {
    // The reservation's unique index: another update or recovery won the race.
    if ((error as { cause?: { code?: string } }).cause?.code === "23505")
      await assertNotReserved(ctx, computer.id);
    throw error;
  }
  if (!operationId)
    throw new AppError("CONFLICT", `cannot ${verb} a computer that is no longer ${FROM[verb]}`);
  await enqueueOperation(ctx, `computer.${verb}`, computer.id, operationId);
  ctx.log.info(`computer.${verb}_requested`, { computerId: computer.id, operationId });
  const [row] = await ctx.db.select().from(computerOperations).where(eq(computerOperations.id, operationId));
  if (!row) throw new AppError("INTERNAL", "operation vanished");
  return toOperationView(row);
}

export const requestComputerUpdate = (ctx: ServiceContext, caller: Caller, input: { computerId: string }) =>
  request(ctx, caller, input.computerId, "update");

export const requestComputerRecover = (ctx: ServiceContext, caller: Caller, input: { computerId: string }) =>
  request(ctx, caller, input.computerId, "recover");

type Job = { computerId: string; operationId: string };

async function load(ctx: ServiceContext, computerId: string) {
  const [row] = await ctx.db.select().from(computers).where(eq(computers.id, computerId)).limit(1);
  return row;
}

/** Provisions a fresh machine (no ref: a rebuild) or reconnects `ref`, then restores if new. */
async function bringUp(ctx: ServiceContext, job: Job, ref: string | null): Promise<void> {
  const computer = await load(ctx, job.computerId);
  if (!computer) throw new Error("computer is gone");
  await updateOperation(ctx, job.operationId, { stage: "provisioning" });
  if (providerMountsHome(ctx)) await prepareComputerHome(ctx, { computer });
  const result = await ctx.provider.provision(provisionRequestOf(computer, ref));
  if (result.replaced && !providerMountsHome(ctx)) {
    await updateOperation(ctx, job.operationId, { stage: "restoring" });
    await restoreComputerHome(ctx, {
      computer: { ...computer, providerKind: ctx.provider.kind, providerRef: result.ref },
      sandbox: ctx.provider.sandbox(result.ref),
    });
  }
  if (!(await markRunningIfProvisioning(ctx, computer.id, result.ref))) {
    await ctx.provider.destroy(result.ref);
    throw new Error("computer changed during the operation");
  }
}

async function fail(ctx: ServiceContext, job: Job, error: unknown, warning: string): Promise<void> {
  const message = `${error instanceof Error ? error.message : String(error)} — ${warning}`;
  ctx.log.error("computer.operation_failed", { ...job, error });
  await updateOperation(ctx, job.operationId, { status: "failed", error: message });
  await ctx.db
    .update(computers)
    .set({ state: "failed", lastError: message })
    .where(
      and(
        eq(computers.id, job.computerId),
        sql`${computers.state} <> 'deleting' and ${computers.state} <> 'deleted'`,
      ),
    );
}

export async function runUpdateJob(ctx: ServiceContext, job: Job, _context: JobContext): Promise<void> {
  if (!(await beginOperation(ctx, job.operationId, "checkpointing"))) {
    ctx.log.warn("operation.delivery_skipped", { ...job });
    return;
  }
  try {
    const computer = await load(ctx, job.computerId);
    if (computer?.state !== "running") throw new Error(`computer is ${computer?.state ?? "missing"}`);
    const ref = computer.providerKind === ctx.provider.kind ? computer.providerRef : null;
    // OPS-3: live work first — browsers closed cleanly, then the workspace saved.
    await checkpointComputerHome(ctx, {
      computerId: computer.id,
      reason: "update",
      quiesce: ref ? async () => void (await releaseDesktops(ctx, ref)) : undefined,
    });
    await updateOperation(ctx, job.operationId, { stage: "stopping" });
    await ctx.db
      .update(computers)
      .set({ state: "provisioning" })
      .where(and(eq(computers.id, computer.id), eq(computers.state, "running")));
    // Destroyed before the ref is dropped: a kill in between leaves a ref to a gone machine
    // (recovery replaces it), never an orphaned machine.
    if (ref) await ctx.provider.destroy(ref);
    await ctx.db.update(computers).set({ providerRef: null }).where(eq(computers.id, computer.id));
    await bringUp(ctx, job, null);
    await updateOperation(ctx, job.operationId, { status: "succeeded", stage: "running" });
    ctx.log.info("computer.updated", { computerId: job.computerId });
  } catch (error) {
    await fail(
      ctx,
      job,
      error,
      "recover the computer (computer/recover): it restarts from the workspace saved at the update's start",
    );
  }
}

export async function runRecoverJob(ctx: ServiceContext, job: Job, _context: JobContext): Promise<void> {
  if (!(await beginOperation(ctx, job.operationId, "provisioning"))) {
    ctx.log.warn("operation.delivery_skipped", { ...job });
    return;
  }
  try {
    const computer = await load(ctx, job.computerId);
    if (computer?.state !== "provisioning") throw new Error(`computer is ${computer?.state ?? "missing"}`);
    // The old machine may be alive (reconnected) or gone (replaced, then restored, OPS-3).
    await bringUp(ctx, job, computer.providerKind === ctx.provider.kind ? computer.providerRef : null);
    await updateOperation(ctx, job.operationId, { status: "succeeded", stage: "running" });
    ctx.log.info("computer.recovered", { computerId: job.computerId });
  } catch (error) {
    await fail(ctx, job, error, RECOVERY_FAILED_WARNING);
  }
}
