/**
 * Where a person's control of a bot's screen ends besides `releaseControl` (TKO-1, CMP-3):
 * a run granted the bot's execution lease takes the bot over, so the control lease ends, every
 * control capability of the bot is revoked (live control websockets close at once) and the
 * machine stops treating the screen as person-controlled. Control expiring on its own needs no
 * call: control capabilities never outlive the lease and the gateway closes them at expiry.
 */
import type { ComputerRow } from "../computers/access.ts";
import type { ServiceContext } from "../context.ts";
import { controlSelector, revokeScreenCapabilities } from "../screens/revoke.ts";
import { endControlLease } from "./leases.ts";

export async function endControlForRun(
  ctx: ServiceContext,
  computer: ComputerRow,
  botId: string,
  runId: string,
): Promise<void> {
  const key = { computerId: computer.id, botId };
  // Without a live lease there is nothing to close: control capabilities never outlive their
  // lease (the gateway closes them at expiry) and release revokes them.
  if (!(await endControlLease(ctx, key))) return;
  await revokeScreenCapabilities(ctx, computer, [controlSelector(botId)]).catch((error: unknown) =>
    ctx.log.warn("screen.revoke_failed", { ...key, error }),
  );
  await markControlled(ctx, computer, botId, false);
  ctx.log.info("control.ended_by_run", { ...key, runId });
}

/**
 * Tells the computer a person controls (or stopped controlling) the bot's screen, so the
 * screen cap never evicts it (CMP-5). The lease in Postgres is the authority; this is a hint
 * to the machine, and a stopped computer simply has nothing to mark.
 */
export async function markControlled(
  ctx: ServiceContext,
  computer: ComputerRow,
  botId: string,
  controlled: boolean,
) {
  if (computer.state !== "running" || !computer.providerRef || computer.providerKind !== ctx.provider.kind)
    return;
  const desktop = ctx.provider.sandbox(computer.providerRef).desktop;
  try {
    await desktop?.setControlled?.(botId, controlled);
  } catch (error) {
    ctx.log.warn("control.mark_failed", { computerId: computer.id, botId, controlled, error });
  }
}
