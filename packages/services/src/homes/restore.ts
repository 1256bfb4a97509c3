/**
 * Restores (PER-2, PRV-3): a new or replacement machine starts from the latest stored
 * workspace. Docker mounts the local home, so `prepareComputerHome` must run BEFORE the
 * container starts (it may swap the folder); other providers import a tar stream into the
 * running machine with `restoreComputerHome`. A failed restore changes nothing and throws a
 * HomeStoreError whose `code` says why (CHECKPOINT_TAMPERED, INVALID_ARCHIVE, …).
 */
import type { Sandbox } from "@rakazo/sandbox";
import type { ComputerRow } from "../computers/access.ts";
import { viaProvider } from "../sandbox-errors.ts";
import { computerMountsHome, type HomesContext } from "./context.ts";
import { dataKeyForStore } from "./keys.ts";

/** Brings `DATA_DIR/homes/<home key>` up to the row's revision; returns its path. */
export async function prepareComputerHome(
  ctx: HomesContext,
  input: { computer: ComputerRow },
): Promise<string> {
  const { computer } = input;
  const materialize = async () =>
    ctx.homes.materialize({
      homeKey: computer.homeKey,
      revision: computer.homeRevision,
      dataKey: await dataKeyForStore(ctx, computer, { create: false }),
    });
  try {
    return await materialize();
  } catch (error) {
    if (!ctx.provider.homeDisks || (error as { code?: unknown }).code !== "EBUSY") throw error;
    // The home's disk is mounted over the folder the store swaps: unmount it and swap the plain
    // folder; the provision that follows moves those files onto a new disk (home-disk.ts).
    await ctx.provider.homeDisks.detach(computer.homeKey);
    return await materialize();
  }
}

export type RestoreComputerHomeResult =
  | { readonly status: "imported"; readonly revision: number }
  | { readonly status: "mounted"; readonly revision: number }
  | { readonly status: "empty"; readonly revision: 0 };

export async function restoreComputerHome(
  ctx: HomesContext,
  input: { computer: ComputerRow; sandbox: Sandbox },
): Promise<RestoreComputerHomeResult> {
  const { computer, sandbox } = input;
  if (computerMountsHome(ctx, computer)) {
    // The container mounts the home prepared before it started; nothing to copy.
    return { status: "mounted", revision: computer.homeRevision };
  }
  if (computer.homeRevision === 0) return { status: "empty", revision: 0 };
  const archive = await ctx.homes.openArchive({
    homeKey: computer.homeKey,
    revision: computer.homeRevision,
    dataKey: await dataKeyForStore(ctx, computer, { create: false }),
  });
  try {
    await viaProvider(() => sandbox.files.importWorkspace(archive));
  } finally {
    archive.destroy();
  }
  ctx.log.info("computer.home_restored", { computerId: computer.id, revision: computer.homeRevision });
  return { status: "imported", revision: computer.homeRevision };
}
