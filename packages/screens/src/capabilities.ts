/**
 * Screen capabilities as the control plane uses them (SCR-2, SCR-4):
 * - the browser capability, sealed with the deployment's URL key, carried in the screen URL;
 * - the gateway ticket, the same claims sealed with the target computer's gateway key, handed
 *   by the API's authority to the web service, which sends it to the gateway in a header.
 * Browsers never see a ticket; computers never see a URL key.
 */
import {
  newCapabilityId,
  type OpenResult,
  openCapability,
  type ScreenClaims,
  type ScreenPolicy,
  sealCapability,
} from "@rakazo/protocol/capability";
import { gatewayKey, type ScreenKeyring, urlKey } from "./keyring.ts";

export const DEFAULT_CAPABILITY_TTL_MS = 15 * 60_000;
/** The longest a capability lives; revocation rules are kept this long. */
export const MAX_CAPABILITY_TTL_MS = 24 * 60 * 60_000;

export interface MintInput {
  readonly computerId: string;
  readonly botId: string;
  readonly slot: number;
  readonly generation: number;
  readonly policy: ScreenPolicy;
  readonly subject: string;
  readonly ttlMs?: number;
  readonly now?: number;
}

export interface MintedCapability {
  readonly token: string;
  readonly claims: ScreenClaims;
}

export function mintScreenCapability(keyring: ScreenKeyring, input: MintInput): MintedCapability {
  const now = input.now ?? Date.now();
  const ttl = Math.min(input.ttlMs ?? DEFAULT_CAPABILITY_TTL_MS, MAX_CAPABILITY_TTL_MS);
  const claims: ScreenClaims = {
    id: newCapabilityId(),
    computerId: input.computerId,
    botId: input.botId,
    slot: input.slot,
    generation: input.generation,
    policy: input.policy,
    subject: input.subject,
    issuedAt: now,
    expiresAt: now + ttl,
  };
  const key = urlKey(keyring, keyring.activeKid) as Buffer;
  return { token: sealCapability(key, keyring.activeKid, "url", claims), claims };
}

export function openScreenCapability(keyring: ScreenKeyring, token: string, now = Date.now()): OpenResult {
  return openCapability(token, "url", (kid) => urlKey(keyring, kid), now);
}

/** The gateway ticket for already-verified claims (same id, same expiry). */
export function gatewayTicket(keyring: ScreenKeyring, claims: ScreenClaims): string {
  const key = gatewayKey(keyring, keyring.activeKid, claims.computerId) as Buffer;
  return sealCapability(key, keyring.activeKid, "gateway", claims);
}
