/**
 * `computer/screenUrl`: a browser URL on the web service for one bot's screen (SCR-2, SCR-4).
 * Starts the bot's desktop if needed (CMP-4), configures the computer's gateway with its own
 * derived keys when this process has not yet for this machine (./gateway-keys.ts), and mints a
 * capability for the slot generation serving the bot now. Control requires the caller to hold
 * the bot's live control lease (TKO-1) and never outlives it.
 */

import type { SandboxDesktop, SlotRef } from "@rakazo/sandbox";
import { mintScreenCapability } from "@rakazo/screens";
import { type ComputerRow, requireComputer, requireRunningMachine } from "../computers/access.ts";
import { requireBotOnComputer, touchComputer } from "../computers/activity.ts";
import type { Caller, ServiceContext } from "../context.ts";
import { AppError } from "../errors.ts";
import { liveControlLease } from "../runs/leases.ts";
import { viaProvider } from "../sandbox-errors.ts";
import { DEFAULT_MAX_SCREEN_TTL_MS, DEFAULT_SCREEN_TTL_MS, type ScreenServiceConfig } from "./config.ts";
import { ensureGatewayConfigured } from "./gateway-keys.ts";

export interface ScreenUrl {
  /** The noVNC page itself. */
  readonly url: string;
  /** The project's embed page for the same capability (for an iframe: reasons, no chrome). */
  readonly embedUrl: string;
  readonly policy: "view" | "control";
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
  // requireRunningMachine refused a computer without a ref; the handle carries the one it used.
  const machine = { computerId: computer.id, providerRef: sandbox.ref };
  return { config, sandbox, machine, desktop: sandbox.desktop, screens: sandbox.screens };
}

export async function screenUrl(
  ctx: ServiceContext,
  caller: Caller,
  input: { computerId: string; botId: string; policy: "view" | "control"; ttlSeconds?: number },
): Promise<ScreenUrl> {
  const computer = await requireComputer(ctx, caller, input.computerId);
  await requireBotOnComputer(ctx, computer, input.botId);
  const { config, machine, desktop, screens } = requireScreens(ctx, computer);
  const now = Date.now();
  let ttlMs = lifetime(config, input.ttlSeconds);
  if (input.policy === "control") {
    const lease = await liveControlLease(ctx, { computerId: computer.id, botId: input.botId });
    if (!lease || lease.userId !== caller.userId) {
      throw new AppError("NOT_IN_CONTROL", "take control of this screen first");
    }
    ttlMs = Math.min(ttlMs, lease.expiresAt.getTime() - now);
  }
  // Independent calls into the computer: the gateway's keys (usually remembered) and the slot.
  const [, slot] = await Promise.all([
    ensureGatewayConfigured(config, screens, machine),
    currentSlot(desktop, input.botId),
  ]);
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
    embedUrl: `${config.webBaseUrl}/embed/${token}/`,
    policy: input.policy,
    capabilityId: claims.id,
    expiresAt: new Date(claims.expiresAt).toISOString(),
    slot,
  };
}

/** The slot generation serving the bot's screen now; starts the desktop when it has none (CMP-4). */
export function currentSlot(desktop: SandboxDesktop, botId: string): Promise<SlotRef> {
  return viaProvider(async () => {
    const running = (await desktop.list()).find(
      (info) => info.botId === botId && ((info as { state?: string }).state ?? "running") === "running",
    );
    return running?.slot ?? (await desktop.observe(botId)).slot;
  });
}

/**
 * The capability's lifetime: the caller's `ttlSeconds`, else the configured default. Asking for
 * more than the configured maximum is refused (INVALID_INPUT naming the maximum), not quietly
 * shortened: an embedder must know when its URL stops working. Control URLs are further cut
 * to the control lease by the caller.
 */
export function lifetime(config: ScreenServiceConfig, ttlSeconds: number | undefined): number {
  const maxMs = config.maxTtlMs ?? DEFAULT_MAX_SCREEN_TTL_MS;
  if (ttlSeconds === undefined) return Math.min(config.ttlMs ?? DEFAULT_SCREEN_TTL_MS, maxMs);
  if (ttlSeconds * 1000 > maxMs) {
    throw new AppError("INVALID_INPUT", `ttlSeconds may be at most ${Math.floor(maxMs / 1000)}`, {
      issues: [{ path: "ttlSeconds", message: `at most ${Math.floor(maxMs / 1000)}` }],
      maxTtlSeconds: Math.floor(maxMs / 1000),
    });
  }
  return ttlSeconds * 1000;
}
