/**
 * The screen authority (SCR-5, SCR-6): the web service asks, for a capability from a browser
 * URL, where the computer's gateway is and which ticket to present there. No caller: the
 * internal endpoint is protected by the service token shared by web and API.
 *
 * A refusal is `SCREEN_REJECTED`-shaped (`FORBIDDEN` with a reason) and never says more than
 * the reason; the target (socket paths, provider hostnames, credentials) goes only to the web
 * service, which never logs it.
 *
 * The mints do not configure a gateway they have configured before (./gateway-keys.ts); the
 * ticket checked here is sealed by this process with its current keys, so a refusal for a key
 * reason means the gateway holds other keys (or none): it is configured once more and asked
 * again, and a second refusal stands.
 */
import { computers } from "@rakazo/db";
import type { ScreenGatewayTarget } from "@rakazo/sandbox";
import { gatewayTicket, openScreenCapability, type ScreenPolicy } from "@rakazo/screens";
import { eq } from "drizzle-orm";
import type { ServiceContext } from "../context.ts";
import { AppError } from "../errors.ts";
import { viaProvider } from "../sandbox-errors.ts";
import { configureGateway, STALE_GATEWAY_REASONS } from "./gateway-keys.ts";
import { requireScreens } from "./screen-url.ts";

export interface ScreenAuthorization {
  readonly target: ScreenGatewayTarget;
  readonly ticket: string;
  readonly policy: ScreenPolicy;
  readonly capabilityId: string;
  readonly expiresAt: string;
}

function rejected(reason: string): AppError {
  return new AppError("FORBIDDEN", "screen capability refused", { reason });
}

export async function authorizeScreen(
  ctx: ServiceContext,
  input: { capability: string },
): Promise<ScreenAuthorization> {
  if (!ctx.screens) throw rejected("not_configured");
  const opened = openScreenCapability(ctx.screens.keyring, input.capability);
  if (!opened.ok) throw rejected(opened.reason);
  const { claims } = opened;
  const [computer] = await ctx.db
    .select()
    .from(computers)
    .where(eq(computers.id, claims.computerId))
    .limit(1);
  if (!computer || computer.state === "deleted") throw rejected("computer_gone");
  let gateway: ReturnType<typeof requireScreens>;
  try {
    gateway = requireScreens(ctx, computer);
  } catch {
    throw rejected("computer_not_ready");
  }
  const { screens } = gateway;
  const ticket = gatewayTicket(ctx.screens.keyring, claims);
  let verdict = await viaProvider(() => screens.check(ticket));
  if (!verdict.ok && STALE_GATEWAY_REASONS.has(verdict.reason)) {
    ctx.log.info("screen.gateway.reconfigured", { computerId: computer.id, reason: verdict.reason });
    await configureGateway(ctx.screens, screens, gateway.machine);
    verdict = await viaProvider(() => screens.check(ticket));
  }
  if (!verdict.ok) throw rejected(verdict.reason);
  const target = await viaProvider(() => screens.target());
  return {
    target,
    ticket,
    policy: claims.policy,
    capabilityId: claims.id,
    expiresAt: new Date(claims.expiresAt).toISOString(),
  };
}
