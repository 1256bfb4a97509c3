/**
 * Early revocation (SCR-2, SCR-3, CMP-6). Rules go to the computer's gateway, which refuses
 * matching tickets and closes matching live connections at once. Selectors cover what the
 * system revokes: one capability by id, or every control capability of a bot (optionally of one
 * person) issued up to now. Rules are kept as long as a capability can live.
 */

import type { ScreenRevocationRule } from "@rakazo/sandbox";
import { MAX_CAPABILITY_TTL_MS } from "@rakazo/screens";
import { type ComputerRow, requireComputer } from "../computers/access.ts";
import type { Caller, ServiceContext } from "../context.ts";
import type { RunHooks } from "../runs/runs.ts";
import { viaProvider } from "../sandbox-errors.ts";

export type RevocationSelector = Omit<ScreenRevocationRule, "expiresAt">;

/** Best effort on a computer that is not running: its screens are gone with it. */
export async function revokeScreenCapabilities(
  ctx: ServiceContext,
  computer: ComputerRow,
  selectors: readonly RevocationSelector[],
): Promise<{ closed: number }> {
  if (computer.state !== "running" || !computer.providerRef || computer.providerKind !== ctx.provider.kind) {
    return { closed: 0 };
  }
  const sandbox = ctx.provider.sandbox(computer.providerRef);
  const screens = sandbox.screens;
  if (!screens) return { closed: 0 };
  const expiresAt = Date.now() + MAX_CAPABILITY_TTL_MS;
  // A terminal lives on its control lease (TRM-6): revoking a bot's control capabilities revokes
  // its terminal capabilities too and stops its PTY server (shells end, session files go).
  const rules = selectors.flatMap((s) =>
    s.policy === "control" ? [s, { ...s, policy: "terminal" as const }] : [s],
  );
  const result = await viaProvider(() => screens.revoke(rules.map((s) => ({ ...s, expiresAt }))));
  const stop = sandbox.stopTerminal?.bind(sandbox);
  if (stop) {
    const bots = new Set(selectors.flatMap((s) => (s.policy === "control" && s.botId ? [s.botId] : [])));
    for (const botId of bots) await viaProvider(() => stop({ botId }));
  }
  ctx.log.info("screen.capability.revoked", {
    computerId: computer.id,
    rules: selectors.length,
    closed: result.closed,
    policy: selectors[0]?.policy ?? "any",
  });
  return result;
}

/** Every control capability of the bot issued up to now (optionally only one person's). */
export function controlSelector(botId: string, subject?: string): RevocationSelector {
  return {
    botId,
    policy: "control",
    issuedAtOrBefore: Date.now(),
    ...(subject !== undefined ? { subject } : {}),
  };
}

/** `computer/revokeScreenUrl`: one capability, by the id `computer/screenUrl` returned. */
export async function revokeScreenUrl(
  ctx: ServiceContext,
  caller: Caller,
  input: { computerId: string; capabilityId: string },
): Promise<{ closed: number }> {
  const computer = await requireComputer(ctx, caller, input.computerId);
  return revokeScreenCapabilities(ctx, computer, [{ id: input.capabilityId }]);
}

/**
 * CMP-6: a finished run's control capabilities are revoked; view capabilities and the screen
 * stay. Compose into `ctx.runHooks.onRunFinished`. Failures are logged, never thrown: the run
 * has already ended.
 */
export const screenRunHooks: Required<RunHooks> = {
  async onRunFinished(ctx, run, computer) {
    try {
      await revokeScreenCapabilities(ctx, computer, [controlSelector(run.botId)]);
    } catch (error) {
      ctx.log.warn("screen.revoke_failed", { computerId: computer.id, botId: run.botId, error });
    }
  },
};
