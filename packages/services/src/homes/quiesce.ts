/**
 * Browser quiescing around a checkpoint (PER-7). Chromium keeps its profile databases (Cookies,
 * Login Data, Web Data, History) open under an exclusive lock and writes cookies only in batches
 * (every 30 s), so neither a copy of the live files nor an SQLite online backup holds a cookie a
 * page set a moment ago; only a browser that closed cleanly has it on disk. See
 * docs/persistence.md "Decisions".
 */
import type { ServiceContext } from "../context.ts";

/** Closes every live desktop's browser cleanly; returns the bots whose desktops were released. */
export async function releaseDesktops(ctx: ServiceContext, ref: string): Promise<string[]> {
  const desktop = ctx.provider.sandbox(ref).desktop;
  if (!desktop) return [];
  const released: string[] = [];
  for (const slot of await desktop.list().catch(() => [])) {
    await desktop.release(slot.botId).then(
      () => released.push(slot.botId),
      (error: unknown) => ctx.log.warn("computer.quiesce_failed", { botId: slot.botId, error }),
    );
  }
  return released;
}

/** What closing a computer's browsers came to. */
interface ClosedBrowsers {
  /** The bots whose browser closed (or, failing that, whose desktop was released). */
  readonly closed: readonly string[];
  /** Every live desktop's browser is closed: its desktops could be listed and none failed. */
  readonly all: boolean;
}

/**
 * Closes every live desktop's browser and keeps the desktops, all at once (each desktop's
 * Chromium is its own process; the supervisor serializes per bot). A desktop whose browser could
 * not be closed this way (e.g. a computer whose supervisor predates `desktop.closeBrowser`) is
 * released instead: its viewers go, but the save is whole.
 */
export async function closeBrowsers(ctx: ServiceContext, ref: string): Promise<ClosedBrowsers> {
  const desktop = ctx.provider.sandbox(ref).desktop;
  if (!desktop) return { closed: [], all: true };
  const slots = await desktop.list().catch((error: unknown) => {
    ctx.log.warn("computer.quiesce_failed", { error });
    return undefined;
  });
  if (!slots) return { closed: [], all: false };
  const closed: string[] = [];
  await Promise.all(
    slots.map((slot) =>
      desktop
        .closeBrowser(slot.botId)
        .catch((error: unknown) => {
          ctx.log.warn("computer.close_browser_failed", { botId: slot.botId, error });
          return desktop.release(slot.botId);
        })
        .then(
          () => closed.push(slot.botId),
          (error: unknown) => ctx.log.warn("computer.quiesce_failed", { botId: slot.botId, error }),
        ),
    ),
  );
  return { closed, all: closed.length === slots.length };
}

/**
 * For a checkpoint of a computer that stays up (a run ended, CMP-6): close only the browsers —
 * each desktop's display and screen server stay, so open viewers stay connected — and once the
 * workspace is saved bring each browser back (observe); it restores its last session (the page
 * state of the open tabs is what this costs).
 */
export function quiesceThenRelaunch(ctx: ServiceContext, ref: string): () => Promise<() => Promise<void>> {
  return async () => {
    const started = performance.now();
    const { closed } = await closeBrowsers(ctx, ref);
    const closedMs = Math.round(performance.now() - started);
    return async () => {
      const relaunching = performance.now();
      const desktop = ctx.provider.sandbox(ref).desktop;
      for (const botId of closed) {
        await desktop?.observe(botId).catch((error: unknown) => {
          ctx.log.warn("computer.relaunch_failed", { botId, error });
        });
      }
      ctx.log.info("computer.browsers_relaunched", {
        desktops: closed.length,
        closeMs: closedMs,
        relaunchMs: Math.round(performance.now() - relaunching),
      });
    };
  };
}
