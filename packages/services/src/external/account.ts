/**
 * Who the external computer surface acts as (EXT-1): one service account per
 * deployment — a user row and a space of its own, created on first use with ids derived from
 * fixed labels, so every API replica and every restart finds the same ones without a lookup
 * table. Screen identities are caller-chosen strings; each maps to a bot of that space whose id
 * is derived from the name (`bot_` + 20 base-36 characters of its SHA-256) and whose row keeps
 * the name as given. Bot ids elsewhere stay `bot_[a-z0-9]{20}`: the mapping, not a looser
 * pattern, is what lets any string name a screen.
 */
import { createHash } from "node:crypto";
import { bots, type Database, spaceMembers, spaces, users } from "@rakazo/db";
import type { Caller, ServiceContext } from "../context.ts";
import { AppError } from "../errors.ts";

const ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz";

/** `<prefix>_` + 20 base-36 characters of SHA-256(label): stable across processes and restarts. */
export function derivedId(prefix: "usr" | "spc" | "bot", label: string): string {
  const digest = createHash("sha256").update(`rakazo-external\0${prefix}\0${label}`).digest();
  let body = "";
  for (let i = 0; i < 20; i += 1) body += ALPHABET[(digest[i] as number) % 36];
  return `${prefix}_${body}`;
}

export const EXTERNAL_USER_ID = derivedId("usr", "service-account");
export const EXTERNAL_SPACE_ID = derivedId("spc", "service-account");
/** The caller every external verb runs as; `tokenId` names the deployment's one token. */
export const EXTERNAL_CALLER: Caller = { userId: EXTERNAL_USER_ID, tokenId: "external" };

/** The bot a screen identity names (pure: the same string always names the same bot). */
export function screenBotId(screen: string): string {
  return derivedId("bot", screen);
}

const ready = new WeakMap<Database, Promise<void>>();

/** Creates the service account's user, space and membership once per database (idempotent). */
export function ensureExternalAccount(ctx: Pick<ServiceContext, "db">): Promise<void> {
  let done = ready.get(ctx.db);
  if (!done) {
    done = ctx.db
      .transaction(async (tx) => {
        await tx
          .insert(users)
          .values({ id: EXTERNAL_USER_ID, name: "external computers" })
          .onConflictDoNothing();
        await tx
          .insert(spaces)
          .values({ id: EXTERNAL_SPACE_ID, name: "External computers" })
          .onConflictDoNothing();
        await tx
          .insert(spaceMembers)
          .values({ spaceId: EXTERNAL_SPACE_ID, userId: EXTERNAL_USER_ID, role: "owner" })
          .onConflictDoNothing();
      })
      .catch((error: unknown) => {
        ready.delete(ctx.db);
        throw error;
      });
    ready.set(ctx.db, done);
  }
  return done;
}

/** The screen's bot, created on first use with the name as given. */
export async function ensureScreen(ctx: Pick<ServiceContext, "db">, screen: string): Promise<string> {
  const botId = screenBotId(screen);
  await ctx.db
    .insert(bots)
    .values({ id: botId, spaceId: EXTERNAL_SPACE_ID, name: screen })
    .onConflictDoNothing();
  const row = await ctx.db.query.bots.findFirst({ where: (b, { eq }) => eq(b.id, botId) });
  // A different name under the same derived id would be a SHA-256 collision: refuse, never share.
  if (!row || row.name !== screen || row.spaceId !== EXTERNAL_SPACE_ID) {
    throw new AppError("CONFLICT", "this screen identity maps to a bot that is not its own");
  }
  return botId;
}
