import type { ServiceContext } from "../context.ts";

/** The home verbs' context: the ServiceContext, which carries the store and the key wrapper. */
export type HomesContext = ServiceContext;

/**
 * Whether this process's provider bind-mounts `DATA_DIR/homes/<home key>` as the live
 * workspace (PRV-5), as its adapter declares in `capabilities.mountsHome`: then the local home
 * IS the workspace, a checkpoint reads it in place and a restore only refreshes it before the
 * machine starts. Never decided by provider kind, so a new adapter only declares it.
 */
export function providerMountsHome(ctx: Pick<ServiceContext, "provider">): boolean {
  return ctx.provider.capabilities.mountsHome;
}

/**
 * Whether `computer`'s workspace is the home its machine mounts: it is on this process's
 * provider (a ref only ever goes back to its own kind) and that provider mounts homes. A
 * computer still recorded on another provider is reached through exported archives only.
 */
export function computerMountsHome(
  ctx: Pick<ServiceContext, "provider">,
  computer: { readonly providerKind: string },
): boolean {
  return computer.providerKind === ctx.provider.kind && providerMountsHome(ctx);
}
