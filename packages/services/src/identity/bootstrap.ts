import { bots, newId, spaceMembers, spaces, users } from "@rakazo/db";
import type { NetworkPolicy } from "@rakazo/sandbox";
import { sql } from "drizzle-orm";
import { insertTeamComputer } from "../computers/team-computer.ts";
import type { ServiceContext } from "../context.ts";
import { AppError } from "../errors.ts";
import { issueToken } from "./tokens.ts";

export interface BootstrapInput {
  readonly userName: string;
  readonly spaceName: string;
  readonly botName: string;
}

export interface BootstrapResult {
  readonly userId: string;
  readonly spaceId: string;
  readonly botId: string;
  /** The space's Team Computer (CMP-1); its machine starts on first use. */
  readonly computerId: string;
  readonly tokenId: string;
  /** Shown once. */
  readonly token: string;
}

// Serialises concurrent first-user claims: exactly one wins.
const BOOTSTRAP_LOCK = 727_102;

/**
 * Whether first-run setup is done (a user exists): all the unauthenticated `GET /setup` tells,
 * so the sign-in page offers setup only on a new installation.
 */
export async function isInstallationSetUp(db: ServiceContext["db"]): Promise<boolean> {
  const existing = await db.select({ id: users.id }).from(users).limit(1);
  return existing.length > 0;
}

/**
 * Creates the first user with a space they own, a bot and an API token. Allowed only while
 * the installation has no user at all; afterwards users are created by members.
 */
export async function bootstrapFirstUser(
  ctx: Pick<ServiceContext, "db" | "provider" | "networkDefault">,
  input: BootstrapInput,
): Promise<BootstrapResult> {
  return ctx.db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${BOOTSTRAP_LOCK})`);
    const existing = await tx.select({ id: users.id }).from(users).limit(1);
    if (existing.length > 0)
      throw new AppError(
        "ALREADY_BOOTSTRAPPED",
        "this installation already has users: use your API token, or mint one on the server with ./rakazo token create --user <name>",
      );
    return createUserWithSpace(tx, {
      ...input,
      providerKind: ctx.provider.kind,
      network: ctx.networkDefault,
    });
  });
}

/**
 * The user + owned space (with its Team Computer) + bot + token bundle; also used by tests to
 * make extra tenants. `providerKind` is the configured provider's kind.
 */
export async function createUserWithSpace(
  db: ServiceContext["db"],
  input: BootstrapInput & { providerKind: string; network?: NetworkPolicy | undefined },
): Promise<BootstrapResult> {
  const userId = newId("user");
  const spaceId = newId("space");
  const botId = newId("bot");
  await db.insert(users).values({ id: userId, name: input.userName });
  await db.insert(spaces).values({ id: spaceId, name: input.spaceName });
  await db.insert(spaceMembers).values({ spaceId, userId, role: "owner" });
  await db.insert(bots).values({ id: botId, spaceId, name: input.botName });
  const computerId = await insertTeamComputer(db, {
    spaceId,
    providerKind: input.providerKind,
    network: input.network,
  });
  const token = await issueToken({ db }, { userId, name: "bootstrap" });
  return { userId, spaceId, botId, computerId, tokenId: token.id, token: token.secret };
}
