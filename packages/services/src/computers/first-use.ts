/**
 * Lazy provisioning of a space's Team Computer (CMP-1): the first call that needs a machine
 * (exec, files, desktop, page tools, screen URLs) on an `unprovisioned` computer queues its
 * provisioning — the same job `computer/start` queues — and waits for it to be running, so an
 * idle space costs nothing and its first user does not have to start it by hand. A running
 * computer's machine found gone on a use is replaced the same way (./machine-gone.ts, PRV-3).
 */

import { computers } from "@rakazo/db";
import type { Sandbox } from "@rakazo/sandbox";
import { and, eq } from "drizzle-orm";
import type { ServiceContext } from "../context.ts";
import { type ComputerRow, requireRunningMachine } from "./access.ts";
import { replacingWhenGone } from "./machine-gone.ts";
import { enqueueOperation, recordOperation } from "./operations.ts";
import { assertWithinSpaceQuota } from "./quota.ts";

/** How long a first use waits for the worker to bring the machine up. */
export const FIRST_USE_WAIT_MS = 120_000;
const POLL_MS = 200;

/** The computer's running machine; an unprovisioned Team Computer is provisioned first. */
export async function machineFor(ctx: ServiceContext, computer: ComputerRow): Promise<Sandbox> {
  if (computer.state !== "unprovisioned") {
    return replacingWhenGone(ctx, computer, requireRunningMachine(ctx, computer));
  }
  await requestFirstProvision(ctx, computer.id);
  const deadline = Date.now() + (ctx.firstUseWaitMs ?? FIRST_USE_WAIT_MS);
  let current = computer;
  for (;;) {
    const [row] = await ctx.db.select().from(computers).where(eq(computers.id, computer.id)).limit(1);
    if (row) current = row;
    // Anything but "still coming up" ends the wait: running, failed, deleted, stopped.
    if (!row || !["unprovisioned", "provisioning"].includes(row.state) || Date.now() > deadline) break;
    await new Promise((done) => setTimeout(done, POLL_MS));
  }
  return requireRunningMachine(ctx, current);
}

/**
 * unprovisioned → provisioning, once: a racing first use finds the transition already made. A
 * space whose running computers fill its memory or CPU quota refuses it (QUOTA_EXCEEDED).
 */
async function requestFirstProvision(ctx: ServiceContext, computerId: string): Promise<void> {
  const operationId = await ctx.db.transaction(async (tx) => {
    const [row] = await tx
      .update(computers)
      .set({ state: "provisioning", lastError: null })
      .where(and(eq(computers.id, computerId), eq(computers.state, "unprovisioned")))
      .returning({ id: computers.id, spaceId: computers.spaceId });
    if (!row) return undefined;
    await assertWithinSpaceQuota(tx, ctx, {
      spaceId: row.spaceId,
      computerId,
      quotas: ["memoryMib", "cpus"],
    });
    return recordOperation(tx, computerId, "provision", "queued");
  });
  if (!operationId) return;
  await enqueueOperation(ctx, "computer.provision", computerId, operationId);
  ctx.log.info("computer.first_use_provision", { computerId });
}
