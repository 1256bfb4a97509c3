/**
 * `computer/terminalUrl` (TRM-4): a sealed `terminal` capability for the bot's computer. Only
 * the holder of the bot's live control lease gets one and it never outlives that lease; it is
 * bound to the slot generation of the bot's screen, so the gateway refuses it (and closes its
 * shells) once that screen is torn down (TRM-6). The provider starts its PTY server beside the
 * screen gateway here (`connectTerminal`, TRM-7); providers without one answer UNSUPPORTED.
 */
import { mintScreenCapability } from "@rakazo/screens";
import { requireComputer } from "../computers/access.ts";
import { requireBotOnComputer, touchComputer } from "../computers/activity.ts";
import { botFolder, ensureBotFolder } from "../computers/bot-folders.ts";
import type { Caller, ServiceContext } from "../context.ts";
import { AppError } from "../errors.ts";
import { liveControlLease } from "../runs/leases.ts";
import { viaProvider } from "../sandbox-errors.ts";
import { ensureGatewayConfigured } from "./gateway-keys.ts";
import { currentSlot, lifetime, requireScreens } from "./screen-url.ts";

export interface TerminalUrl {
  readonly url: string;
  readonly websocketUrl: string;
  readonly capabilityId: string;
  readonly expiresAt: string;
  readonly slot: { readonly index: number; readonly generation: number };
}

export async function terminalUrl(
  ctx: ServiceContext,
  caller: Caller,
  input: { computerId: string; botId: string; ttlSeconds?: number },
): Promise<TerminalUrl> {
  const computer = await requireComputer(ctx, caller, input.computerId);
  await requireBotOnComputer(ctx, computer, input.botId);
  const { config, sandbox, machine, desktop, screens } = requireScreens(ctx, computer);
  if (!ctx.provider.capabilities.terminal || !sandbox.connectTerminal) {
    throw new AppError("UNSUPPORTED", `${ctx.provider.kind} computers have no browser terminal`);
  }
  const now = Date.now();
  const lease = await liveControlLease(ctx, { computerId: computer.id, botId: input.botId });
  if (!lease || lease.userId !== caller.userId) {
    throw new AppError("NOT_IN_CONTROL", "take control of this screen first");
  }
  const ttlMs = Math.min(lifetime(config, input.ttlSeconds), lease.expiresAt.getTime() - now);
  const [, slot] = await Promise.all([
    ensureGatewayConfigured(config, screens, machine),
    currentSlot(desktop, input.botId),
  ]);
  await ensureBotFolder(sandbox, computer, input.botId);
  const connect = sandbox.connectTerminal.bind(sandbox);
  await viaProvider(() => connect({ botId: input.botId, slot, cwd: botFolder(computer, input.botId) }));
  const { token, claims } = mintScreenCapability(config.keyring, {
    computerId: computer.id,
    botId: input.botId,
    slot: slot.index,
    generation: slot.generation,
    policy: "terminal",
    subject: caller.userId,
    ttlMs,
    now,
  });
  await touchComputer(ctx, computer.id);
  ctx.log.info("screen.capability.minted", {
    computerId: computer.id,
    botId: input.botId,
    policy: "terminal",
    "screen.capability_id": claims.id,
    slot: slot.index,
    generation: slot.generation,
  });
  const page = `${config.webBaseUrl}/terminals/${token}/`;
  return {
    url: page,
    websocketUrl: `${page.replace(/^http/, "ws")}pty`,
    capabilityId: claims.id,
    expiresAt: new Date(claims.expiresAt).toISOString(),
    slot,
  };
}
