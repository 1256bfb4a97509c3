/**
 * reconcileHomeObjects (PER-5): deletes bucket objects no computer owns — the home key is not on
 * any live row, or the revision is older than the row's. An object NEWER than the row's revision
 * is an upload whose commit has not happened yet (or never will, after a crash): it is kept for
 * `inFlightGraceMs`, then deleted.
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
    for (const object of batch) {
      const owner = owners.get(object.homeKey);
      const age = now - (object.lastModified?.getTime() ?? 0);
      const orphan =
        !owner ||
        owner.state === "deleted" ||
        object.revision < owner.revision ||
        (object.revision > owner.revision && age > grace);
      if (!orphan) continue;
      await ctx.homes.deleteObject(object.homeKey, object.revision);
      deleted += 1;
      ctx.log.info("computer.home_object_reconciled", { homeKey: object.homeKey, revision: object.revision });
    }
    batch = [];
  };
  for await (const object of ctx.homes.listObjects()) {
    scanned += 1;
    batch.push(object);
    if (batch.length >= 500) await flush();
  }
  await flush();
  return { scanned, deleted };
}
