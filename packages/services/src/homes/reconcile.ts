/**
 * reconcileHomeObjects (PER-5): deletes bucket objects no computer owns — the home key is not on
 * any live row, or the revision is older than the row's and not part of its chain (an
 * incremental checkpoint's base and deltas, docs/persistence.md). An object NEWER than the row's
 * revision is an upload whose commit has not happened yet (or never will, after a crash): it is
 * kept for `inFlightGraceMs`, then deleted.
 */
import { computers } from "@rakazo/db";
import { inArray } from "drizzle-orm";
import type { HomesContext } from "./context.ts";
import type { StoredObject } from "./deps.ts";

export interface ReconcileHomeObjectsResult {
  readonly scanned: number;
  readonly deleted: number;
}

export async function reconcileHomeObjects(
  ctx: HomesContext,
  options: { inFlightGraceMs?: number; now?: Date } = {},
): Promise<ReconcileHomeObjectsResult> {
  const grace = options.inFlightGraceMs ?? 60 * 60 * 1000;
  const now = (options.now ?? new Date()).getTime();
  let scanned = 0;
  let deleted = 0;
  let batch: StoredObject[] = [];
  const flush = async () => {
    const keys = [...new Set(batch.map((o) => o.homeKey))];
    const rows = keys.length
      ? await ctx.db
          .select({ homeKey: computers.homeKey, revision: computers.homeRevision, state: computers.state })
          .from(computers)
          .where(inArray(computers.homeKey, keys))
      : [];
    const owners = new Map(rows.map((r) => [r.homeKey, r]));
    // The chain of each home's latest revision: base..latest, read off the latest object's key.
    const chainBase = new Map<string, number>();
    for (const object of batch) {
      const owner = owners.get(object.homeKey);
      if (owner && object.revision === owner.revision) chainBase.set(object.homeKey, object.base);
    }
    for (const object of batch) {
      const owner = owners.get(object.homeKey);
      const age = now - (object.lastModified?.getTime() ?? 0);
      const base = chainBase.get(object.homeKey);
      const inChain = base !== undefined && object.base === base && object.revision >= base;
      const orphan =
        !owner ||
        owner.state === "deleted" ||
        (object.revision < owner.revision && !inChain) ||
        (object.revision > owner.revision && age > grace);
      if (!orphan) continue;
      await ctx.homes.deleteObject(object);
      deleted += 1;
      ctx.log.info("computer.home_object_reconciled", { homeKey: object.homeKey, revision: object.revision });
    }
    batch = [];
  };
  // A home's objects are listed together (keys share its prefix); a batch ends only between
  // homes, so each decision sees the home's latest object.
  for await (const object of ctx.homes.listObjects()) {
    scanned += 1;
    if (batch.length >= 500 && batch.at(-1)?.homeKey !== object.homeKey) await flush();
    batch.push(object);
  }
  await flush();
  return { scanned, deleted };
}
