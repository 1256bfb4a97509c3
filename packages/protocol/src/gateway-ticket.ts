/**
 * How a computer's gateway decides whether a ticket is served (SCR-2, SCR-3, TRM-6): the one
 * implementation for the supervisor's screen gateway and the fake provider's terminal gateway
 * (TRM-8). Seal and expiry (capability-codec.ts), this computer, then the revocation list; the
 * caller adds what only it knows (the slot's current generation, whether a terminal runs).
 * Node builtins only, like the codec: the supervisor bundle imports it.
 */
import { timingSafeEqual } from "node:crypto";
import {
  isKeyId,
  type OpenFailure,
  openCapability,
  type ScreenClaims,
  type ScreenPolicy,
} from "./capability-codec.ts";

/** Matches claims when every field it sets matches; `expiresAt` is when it may be forgotten. */
export interface RevocationRule {
  readonly id?: string;
  readonly botId?: string;
  readonly policy?: ScreenPolicy;
  readonly subject?: string;
  /** Matches capabilities issued at or before this time (ms). */
  readonly issuedAtOrBefore?: number;
  readonly expiresAt: number;
}

export interface GatewayKeys {
  readonly computerId: string;
  /** Gateway keys of this computer (already derived by the host), base64, newest first. */
  readonly keys: readonly { readonly kid: string; readonly key: string }[];
}

export type TicketRejection =
  | "missing_ticket"
  | "not_configured"
  | OpenFailure
  | "wrong_computer"
  | "revoked";

export function ruleMatches(rule: RevocationRule, claims: ScreenClaims): boolean {
  if (rule.id === undefined && rule.issuedAtOrBefore === undefined) return false;
  return (
    (rule.id === undefined || rule.id === claims.id) &&
    (rule.botId === undefined || rule.botId === claims.botId) &&
    (rule.policy === undefined || rule.policy === claims.policy) &&
    (rule.subject === undefined || rule.subject === claims.subject) &&
    (rule.issuedAtOrBefore === undefined || claims.issuedAt <= rule.issuedAtOrBefore)
  );
}

export function sameText(a: string, b: string): boolean {
  const ba = Buffer.from(a);
  const bb = Buffer.from(b);
  return ba.length === bb.length && timingSafeEqual(ba, bb);
}

/** The keys of a gateway config by key id; throws on a malformed config. */
export function parseKeys(config: GatewayKeys): Map<string, Buffer> {
  if (
    typeof config?.computerId !== "string" ||
    config.computerId.length === 0 ||
    !Array.isArray(config.keys)
  ) {
    throw new Error("gateway config needs computerId and keys");
  }
  const keys = new Map<string, Buffer>();
  for (const entry of config.keys) {
    const key = Buffer.from(String(entry?.key ?? ""), "base64");
    if (!isKeyId(String(entry?.kid ?? "")) || key.length !== 32) {
      throw new Error("gateway keys are {kid, key: base64 of 32 bytes}");
    }
    keys.set(entry.kid, key);
  }
  if (keys.size === 0) throw new Error("gateway config needs at least one key");
  return keys;
}

/** Opens a gateway ticket for this computer and checks it against the revocation list. */
export function verifyGatewayTicket(
  ticket: string | undefined,
  gateway: {
    readonly computerId: string | undefined;
    readonly keys: ReadonlyMap<string, Buffer>;
    readonly rules: readonly RevocationRule[];
  },
  now: number,
): { ok: true; claims: ScreenClaims } | { ok: false; reason: TicketRejection } {
  if (!ticket) return { ok: false, reason: "missing_ticket" };
  if (!gateway.computerId || gateway.keys.size === 0) return { ok: false, reason: "not_configured" };
  const opened = openCapability(ticket, "gateway", (kid) => gateway.keys.get(kid), now);
  if (!opened.ok) return { ok: false, reason: opened.reason };
  const { claims } = opened;
  if (!sameText(claims.computerId, gateway.computerId)) return { ok: false, reason: "wrong_computer" };
  if (gateway.rules.some((rule) => ruleMatches(rule, claims))) return { ok: false, reason: "revoked" };
  return { ok: true, claims };
}
