/**
 * The one gate every agent verb passes: the caller sees the computer, the bot may use it, the
 * run's fencing token is the bot's live execution lease (CMP-3), and the machine is running.
 * A superseded holder is refused here with STALE_LEASE, before anything touches the sandbox.
 */
import type { Sandbox } from "@rakazo/sandbox";
import { type ComputerRow, requireComputer } from "../computers/access.ts";
import { requireBotOnComputer, touchComputer } from "../computers/activity.ts";
import { machineFor } from "../computers/first-use.ts";
import type { Caller, ServiceContext } from "../context.ts";
import { assertFence } from "../runs/leases.ts";

export interface FencedTarget {
  readonly computerId: string;
  readonly botId: string;
  readonly fencingToken: number;
}

export async function fencedMachine(
  ctx: ServiceContext,
  caller: Caller,
  target: FencedTarget,
): Promise<{ computer: ComputerRow; sandbox: Sandbox }> {
  const computer = await requireComputer(ctx, caller, target.computerId);
  await requireBotOnComputer(ctx, computer, target.botId);
  await assertFence(ctx, { computerId: computer.id, botId: target.botId, fencingToken: target.fencingToken });
  const sandbox = await machineFor(ctx, computer);
  await touchComputer(ctx, computer.id);
  return { computer, sandbox };
}
