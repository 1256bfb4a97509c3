/**
 * Screen master keys (key id → 32 bytes) and the keys derived from them. The active key (the
 * first) seals; every listed key opens, so rotation is: add a new key first, keep the old one
 * until the longest capability lifetime has passed, then drop it.
 *
 * Format (`SCREEN_CAPABILITY_KEYS`): `kid:base64,kid:base64` — 32-byte keys, newest first.
 * Master keys stay in the control plane; computers only ever receive their own derived gateway
 * keys (`gatewayKeysFor`).
 */
import { randomBytes } from "node:crypto";
import { deriveScreenKey, isKeyId } from "@rakazo/protocol/capability";

export interface ScreenKeyring {
  readonly activeKid: string;
  readonly masters: ReadonlyMap<string, Buffer>;
}

export class ScreenKeyError extends Error {
  override readonly name = "ScreenKeyError";
}

export function parseScreenKeys(value: string): ScreenKeyring {
  const masters = new Map<string, Buffer>();
  let activeKid: string | undefined;
  for (const entry of value
    .split(",")
    .map((part) => part.trim())
    .filter(Boolean)) {
    const colon = entry.indexOf(":");
    const kid = entry.slice(0, colon);
    const key = Buffer.from(entry.slice(colon + 1), "base64");
    if (colon <= 0 || !isKeyId(kid) || key.length !== 32) {
      // Never echo the value: it is a secret.
      throw new ScreenKeyError("screen keys are kid:base64(32 bytes), comma-separated");
    }
    if (masters.has(kid)) throw new ScreenKeyError(`screen key id ${kid} appears twice`);
    masters.set(kid, key);
    activeKid ??= kid;
  }
  if (!activeKid) throw new ScreenKeyError("no screen keys configured");
  return { activeKid, masters };
}

/** A fresh keyring value for `SCREEN_CAPABILITY_KEYS`. */
export function generateScreenKeys(kid = `k${Date.now().toString(36)}`): string {
  return `${kid}:${randomBytes(32).toString("base64")}`;
}

export function urlKey(keyring: ScreenKeyring, kid: string): Buffer | undefined {
  const master = keyring.masters.get(kid);
  return master ? deriveScreenKey(master, "url", "") : undefined;
}

export function gatewayKey(keyring: ScreenKeyring, kid: string, computerId: string): Buffer | undefined {
  const master = keyring.masters.get(kid);
  return master ? deriveScreenKey(master, "gateway", computerId) : undefined;
}

/** What the host hands one computer's gateway (supervisor `screens.configure`). */
export function gatewayKeysFor(
  keyring: ScreenKeyring,
  computerId: string,
): { computerId: string; keys: { kid: string; key: string }[] } {
  return {
    computerId,
    keys: [...keyring.masters.keys()].map((kid) => ({
      kid,
      key: (gatewayKey(keyring, kid, computerId) as Buffer).toString("base64"),
    })),
  };
}
