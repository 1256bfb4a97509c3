/**
 * The server owner: the person an installation answers to (OPS-6's release of interrupted
 * operations; shown on every space's members page). It is the installation's first user until
 * the operator transfers it (`./rakazo owner transfer <user>`); a transfer is one row in
 * `server_owner`, which then names the owner. See docs/decisions.md, "People".
 */
import { serverOwner, users } from "@rakazo/db";
import { asc, eq, or } from "drizzle-orm";
import type { ServiceContext } from "../context.ts";
import { AppError } from "../errors.ts";

type Db = Pick<ServiceContext, "db">;

/** The server owner's user id: the transferred one, else the installation's first user. */
export async function serverOwnerId(ctx: Db): Promise<string | undefined> {
  const [chosen] = await ctx.db.select({ userId: serverOwner.userId }).from(serverOwner).limit(1);
  if (chosen) return chosen.userId;
  const [first] = await ctx.db
    .select({ id: users.id })
    .from(users)
    .orderBy(asc(users.createdAt), asc(users.id))
    .limit(1);
  return first?.id;
}

export async function requireServerOwner(ctx: Db, userId: string): Promise<void> {
  if ((await serverOwnerId(ctx)) !== userId) {
    throw new AppError("NOT_SERVER_OWNER", "only the server owner may do this");
  }
}

export interface ServerOwnerView {
  readonly userId: string;
  readonly name: string;
}

/** The server owner with their name, or undefined on an installation without users. */
export async function serverOwnerView(ctx: Db): Promise<ServerOwnerView | undefined> {
  const id = await serverOwnerId(ctx);
  if (!id) return undefined;
  const [row] = await ctx.db.select({ name: users.name }).from(users).where(eq(users.id, id)).limit(1);
  return row ? { userId: id, name: row.name } : undefined;
}

/**
 * The operator's transfer (`./rakazo owner transfer <user>`): `user` is a user id or a name
 * that exactly one user has. No RPC reaches this: the shell on the server is the authority.
 */
export async function transferServerOwner(
  ctx: Db,
  input: { user: string },
): Promise<{ from: ServerOwnerView | undefined; to: ServerOwnerView }> {
  const matches = await ctx.db
    .select({ id: users.id, name: users.name })
    .from(users)
    .where(or(eq(users.id, input.user), eq(users.name, input.user)))
    .limit(2);
  const [to] = matches;
  if (!to) throw new AppError("NOT_FOUND", `no user ${input.user}`);
  if (matches.length > 1)
    throw new AppError("CONFLICT", `more than one user is named ${input.user}: name them by id (usr_…)`);
  const from = await serverOwnerView(ctx);
  await ctx.db
    .insert(serverOwner)
    .values({ singleton: true, userId: to.id })
    .onConflictDoUpdate({ target: serverOwner.singleton, set: { userId: to.id, changedAt: new Date() } });
  return { from, to: { userId: to.id, name: to.name } };
}
