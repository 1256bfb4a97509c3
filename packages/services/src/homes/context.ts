import type { ServiceContext } from "../context.ts";

/** The home verbs' context: the ServiceContext, which carries the store and the key wrapper. */
export type HomesContext = ServiceContext;

/**
 * Providers that bind-mount `DATA_DIR/homes/<home key>` as the live workspace (PRV-5): for
 * them the local home IS the workspace, a checkpoint reads it in place and a restore only
 * refreshes it before the machine starts.
 */
export const HOME_MOUNTING_PROVIDERS: ReadonlySet<string> = new Set(["docker"]);

export function mountsHome(providerKind: string): boolean {
  return HOME_MOUNTING_PROVIDERS.has(providerKind);
}
