/**
 * checkpointComputerHome (PER-2, PER-4, PER-7): saves the computer's workspace as the next
 * revision. Homes a provider mounts (`capabilities.mountsHome`) are read in place; other
 * providers export a tar stream. The row's
 * `homeRevision` advances only through the store's `commit`, a conditional update on the
 * revision this checkpoint started from. Deferral while other bots hold leases is the caller's
 * decision (the job that calls this).
 */
import { computers } from "@rakazo/db";
import { and, eq } from "drizzle-orm";
import { viaProvider } from "../sandbox-errors.ts";
import { computerMountsHome, type HomesContext } from "./context.ts";
import type { CheckpointSource } from "./deps.ts";
import { dataKeyForStore } from "./keys.ts";

export interface CheckpointComputerHomeInput {
  readonly computerId: string;
  /** Why (run finished, stop, idle, update…); logged. */
  readonly reason: string;
  /**
   * Makes browser profiles consistent before the export (PER-7), e.g. flush/close Chromium on
   * each active desktop. Wired by the caller; not called when there is nothing to export. What
   * it returns, if anything, runs once the workspace has been read (saved or not), e.g. to
   * relaunch the browsers of a computer that stays up.
   */
  readonly quiesce?: () => Promise<(() => Promise<void>) | undefined | void>;
  readonly force?: boolean;
}

export type CheckpointComputerHomeResult =
  | {
      readonly status: "saved" | "unchanged";
      readonly revision: number;
      readonly files: number;
      readonly bytes: number;
    }
  | { readonly status: "skipped"; readonly revision: number; readonly why: "computer_gone" | "no_machine" };

export async function checkpointComputerHome(
  ctx: HomesContext,
  input: CheckpointComputerHomeInput,
): Promise<CheckpointComputerHomeResult> {
  const started = performance.now();
  const [computer] = await ctx.db.select().from(computers).where(eq(computers.id, input.computerId)).limit(1);
  if (!computer || computer.state === "deleted" || computer.state === "deleting") {
    return { status: "skipped", revision: computer?.homeRevision ?? 0, why: "computer_gone" };
  }
  const ownMachine = computer.providerKind === ctx.provider.kind ? computer.providerRef : null;
  const mounted = computerMountsHome(ctx, computer);
  if (!mounted && !ownMachine)
    return { status: "skipped", revision: computer.homeRevision, why: "no_machine" };
  // The store reads the whole workspace before `checkpoint` returns; only then may browsers run.
  const resume = await input.quiesce?.();
  try {
    const source: CheckpointSource =
      mounted || !ownMachine
        ? { kind: "local-dir" }
        : {
            kind: "archive",
            archive: await viaProvider(() => ctx.provider.sandbox(ownMachine).files.exportWorkspace()),
          };
    return await saveHome(ctx, computer, input, source, started);
  } finally {
    await resume?.();
  }
}

async function saveHome(
  ctx: HomesContext,
  computer: typeof computers.$inferSelect,
  input: CheckpointComputerHomeInput,
  source: CheckpointSource,
  started: number,
): Promise<CheckpointComputerHomeResult> {
  const previousRevision = computer.homeRevision;
  const result = await ctx.homes.checkpoint({
    homeKey: computer.homeKey,
    dataKey: await dataKeyForStore(ctx, computer, { create: true }),
    previousRevision,
    source,
    force: input.force ?? false,
    commit: async (revision) => {
      const moved = await ctx.db
        .update(computers)
        .set({ homeRevision: revision })
        .where(and(eq(computers.id, computer.id), eq(computers.homeRevision, previousRevision)))
        .returning({ id: computers.id });
      return moved.length === 1;
    },
  });
  ctx.log.info("computer.home_checkpoint", {
    computerId: computer.id,
    reason: input.reason,
    status: result.status,
    revision: result.revision,
    files: result.files,
    bytes: result.bytes,
    ms: Math.round(performance.now() - started),
  });
  return result;
}
