/**
 * PER-5 key hierarchy on the rows: `spaces.contentKeyWrapped` (wrapped by the master key
 * through `ctx.keys`) and `computers.dataKeyWrapped` (wrapped by the space content key).
 * Keys are created on first need with conditional updates, so concurrent creators agree on the
 * first one written. A null `dataKeyWrapped` on a home that has checkpoints means the key was
 * destroyed: the objects are unreadable by design (crypto-shredding).
 */
import { computers, spaces } from "@rakazo/db";
import { and, eq, isNull } from "drizzle-orm";
import type { HomesContext } from "./context.ts";
import { HomeStoreError, newDataKey, unwrapWithKey, wrapWithKey } from "./deps.ts";

export interface HomeKeyRow {
  readonly id: string;
  readonly spaceId: string;
  readonly homeKey: string;
  readonly homeRevision: number;
  readonly dataKeyWrapped: string | null;
}

async function spaceContentKey(ctx: HomesContext, spaceId: string): Promise<Buffer> {
  const context = `space:${spaceId}`;
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const [space] = await ctx.db
      .select({ wrapped: spaces.contentKeyWrapped })
      .from(spaces)
      .where(eq(spaces.id, spaceId))
      .limit(1);
    if (!space) throw new HomeStoreError("KEY_UNAVAILABLE", `space ${spaceId} does not exist`);
    if (space.wrapped) return ctx.keys.unwrap(space.wrapped, context);
    const wrapped = await ctx.keys.wrap(newDataKey(), context);
    await ctx.db
      .update(spaces)
      .set({ contentKeyWrapped: wrapped })
      .where(and(eq(spaces.id, spaceId), isNull(spaces.contentKeyWrapped)));
  }
  throw new HomeStoreError("KEY_UNAVAILABLE", `could not settle the content key of ${spaceId}`);
}

/**
 * The home's data key. `create` (checkpoints, which write a new object): make one if the home
 * has none. Readers never create one: a missing key answers `KEY_UNAVAILABLE`.
 */
export async function homeDataKey(
  ctx: HomesContext,
  computer: HomeKeyRow,
  options: { create: boolean },
): Promise<Buffer> {
  const context = `home:${computer.homeKey}`;
  let wrapped = computer.dataKeyWrapped;
  if (!wrapped) {
    if (!options.create) {
      throw new HomeStoreError(
        "KEY_UNAVAILABLE",
        `the data key of home ${computer.homeKey} is gone; its checkpoints cannot be read`,
      );
    }
    const contentKey = await spaceContentKey(ctx, computer.spaceId);
    await ctx.db
      .update(computers)
      .set({ dataKeyWrapped: wrapWithKey(contentKey, newDataKey(), context) })
      .where(and(eq(computers.id, computer.id), isNull(computers.dataKeyWrapped)));
    const [row] = await ctx.db
      .select({ wrapped: computers.dataKeyWrapped })
      .from(computers)
      .where(eq(computers.id, computer.id))
      .limit(1);
    wrapped = row?.wrapped ?? null;
    if (!wrapped) throw new HomeStoreError("KEY_UNAVAILABLE", `computer ${computer.id} has no data key`);
    return unwrapWithKey(contentKey, wrapped, context);
  }
  return unwrapWithKey(await spaceContentKey(ctx, computer.spaceId), wrapped, context);
}

/** The data key when the store needs one (object storage), else undefined. */
export async function dataKeyForStore(
  ctx: HomesContext,
  computer: HomeKeyRow,
  options: { create: boolean },
): Promise<Buffer | undefined> {
  if (ctx.homes.kind !== "object") return undefined;
  if (!options.create && computer.homeRevision === 0) return undefined;
  return homeDataKey(ctx, computer, options);
}
