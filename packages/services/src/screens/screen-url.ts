/**
 * `computer/screenUrl`: a browser URL on the web service for one bot's screen (SCR-2, SCR-4).
 * Starts the bot's desktop if needed (CMP-4), configures the computer's gateway with its own
 * derived keys, and mints a capability for the slot generation serving the bot now. Control
 * requires the caller to hold the bot's live control lease (TKO-1) and never outlives it.
 */

import type { SandboxScreens } from "@rakazo/sandbox";
import { gatewayKeysFor, mintScreenCapability, type ScreenPolicy } from "@rakazo/screens";
import { type ComputerRow, requireComputer, requireRunningMachine } from "../computers/access.ts";
import { requireBotOnComputer, touchComputer } from "../computers/activity.ts";
import type { Caller, ServiceContext } from "../context.ts";
import { AppError } from "../errors.ts";
import { liveControlLease } from "../runs/leases.ts";
import { viaProvider } from "../sandbox-errors.ts";
import type { ScreenServiceConfig } from "./config.ts";

export interface ScreenUrl {
  readonly url: string;
  readonly policy: ScreenPolicy;
  readonly capabilityId: string;
  readonly expiresAt: string;
  readonly slot: { readonly index: number; readonly generation: number };
}

export function requireScreens(ctx: ServiceContext, computer: ComputerRow) {
  const config = ctx.screens;
  if (!config) throw new AppError("UNSUPPORTED", "screens are not configured on this deployment");
  const sandbox = requireRunningMachine(ctx, computer);
  if (!sandbox.desktop || !sandbox.screens) {
    throw new AppError("UNSUPPORTED", `${ctx.provider.kind} computers have no screen gateway`);
  }
  return { config, sandbox, desktop: sandbox.desktop, screens: sandbox.screens };
}

export async function configureGateway(
  config: ScreenServiceConfig,
  screens: SandboxScreens,
  computerId: string,
): Promise<void> {
  await viaProvider(() => screens.configure(gatewayKeysFor(config.keyring, computerId)));
}

export async function screenUrl(
  ctx: ServiceContext,
  caller: Caller,
  input: { computerId: string; botId: string; policy: ScreenPolicy },
): Promise<ScreenUrl> {
  const computer = await requireComputer(ctx, caller, input.computerId);
  await requireBotOnComputer(ctx, computer, input.botId);
  const { config, desktop, screens } = requireScreens(ctx, computer);
  const now = Date.now();
  let ttlMs = config.ttlMs ?? 15 * 60_000;
  if (input.policy === "control") {
    const lease = await liveControlLease(ctx, { computerId: computer.id, botId: input.botId });
    if (!lease || lease.userId !== caller.userId) {
      throw new AppError("NOT_IN_CONTROL", "take control of this screen first");
    }
    ttlMs = Math.min(ttlMs, lease.expiresAt.getTime() - now);
  }
  await configureGateway(config, screens, computer.id);
  const slot = await viaProvider(async () => {
    const running = (await desktop.list()).find(
      (info) => info.botId === input.botId && ((info as { state?: string }).state ?? "running") === "running",
    );
    return running?.slot ?? (await desktop.observe(input.botId)).slot;
  });
  const { token, claims } = mintScreenCapability(config.keyring, {
    computerId: computer.id,
    botId: input.botId,
    slot: slot.index,
    generation: slot.generation,
    policy: input.policy,
    subject: caller.userId,
    ttlMs,
    now,
  });
  await touchComputer(ctx, computer.id);
  ctx.log.info("screen.capability.minted", {
    computerId: computer.id,
    botId: input.botId,
    policy: input.policy,
    "screen.capability_id": claims.id,
    slot: slot.index,
    generation: slot.generation,
  });
  return {
    url: `${config.webBaseUrl}/screens/${token}/`,
    policy: input.policy,
    capabilityId: claims.id,
    expiresAt: new Date(claims.expiresAt).toISOString(),
    slot,
  };
}
