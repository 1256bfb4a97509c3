/**
 * The gateway core: how a computer's gateway decides whether a ticket is served (SCR-2, SCR-3,
 * TRM-6), which HTTP status each refusal gets, and the files it keeps its keys and revocations
 * in. The one implementation for the supervisor's screen gateway and the fake provider's
 * terminal gateway (TRM-8); `runGatewayContract` (./testing/gateway-contract.ts) holds both to it.
 * Seal and expiry (capability-codec.ts), this computer, then the revocation list; the caller adds
 * what only it knows (the slot's current generation, whether a terminal runs).
 * Node builtins only, like the codec: the supervisor bundle imports it.
 */
import { timingSafeEqual } from "node:crypto";
import { appendFileSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import type { Duplex } from "node:stream";
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

// ------------------------------------------------------------------ refusals

/** Why a gateway refuses a request: the ticket's verdict, then what the gateway itself knows. */
export type GatewayRejection =
  | TicketRejection
  | "slot_gone"
  | "wrong_policy"
  | "terminal_stopped"
  | "bad_request"
  | "upstream_unavailable";

/** The HTTP status of each refusal, on `GET /v1/screen` and on a refused websocket upgrade. */
export const REJECT_STATUS: Readonly<Record<GatewayRejection, number>> = {
  bad_request: 400,
  missing_ticket: 401,
  malformed: 401,
  unknown_key: 401,
  forged: 401,
  expired: 403,
  revoked: 403,
  wrong_computer: 403,
  wrong_policy: 403,
  slot_gone: 410,
  terminal_stopped: 410,
  not_configured: 503,
  upstream_unavailable: 502,
};

/**
 * Why a verified ticket may not open this upgrade path: a terminal ticket opens only the PTY
 * path (TRM-4), a screen ticket only the RFB one.
 */
export function policyRejection(terminalPath: boolean, policy: ScreenPolicy): "wrong_policy" | undefined {
  return terminalPath === (policy === "terminal") ? undefined : "wrong_policy";
}

export function headerValue(request: http.IncomingMessage, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** A JSON answer no cache keeps. */
export function replyJson(
  response: http.ServerResponse,
  status: number,
  body: Record<string, unknown>,
): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    "content-type": "application/json",
    "cache-control": "no-store, no-transform",
    "content-length": Buffer.byteLength(text),
  });
  response.end(text);
}

/** Refuses a websocket upgrade with the reason's status and `{ok: false, reason}`. */
export function refuseUpgrade(socket: Duplex, reason: GatewayRejection): void {
  const status = REJECT_STATUS[reason];
  const body = JSON.stringify({ ok: false, reason });
  socket.end(
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? "Error"}\r\n` +
      `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
      `connection: close\r\n\r\n${body}`,
  );
}

// ------------------------------------------------------------------ state files

/** The most revocation rules a gateway keeps (the newest). */
export const MAX_REVOCATION_RULES = 10_000;

/**
 * Where a gateway keeps its keys (the `GatewayKeys` JSON) and its revocations, 0600 in its state
 * directory. The revocation file is lines of JSON arrays of rules: the supervisor rewrites it as
 * one line, the fake provider's processes append a line each (appends never lose a rule).
 */
export function gatewayStateFiles(stateDir: string): { keys: string; rules: string } {
  return { keys: path.join(stateDir, "gateway.key"), rules: path.join(stateDir, "gateway-revocations.json") };
}

/** Writes a 0600 file whole: readers see the old text or the new, never a part. */
export function writePrivate(file: string, text: string): void {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, text, { mode: 0o600 });
  renameSync(tmp, file);
}

/** One line of the revocation file. */
export function formatRevocations(rules: readonly RevocationRule[]): string {
  return `${JSON.stringify(rules)}\n`;
}

/** The unexpired rules of a revocation file, the newest `MAX_REVOCATION_RULES`. */
export function parseRevocations(text: string, now: number): RevocationRule[] {
  const rules: RevocationRule[] = [];
  for (const line of text.split("\n")) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      // A torn last line is an append still being written: the next read sees it.
      continue;
    }
    if (!Array.isArray(parsed)) continue;
    for (const rule of parsed as RevocationRule[]) if (rule?.expiresAt > now) rules.push(rule);
  }
  return rules.slice(-MAX_REVOCATION_RULES);
}

/** The unexpired rules and the added ones, the newest `MAX_REVOCATION_RULES`. */
export function addRevocations(
  rules: readonly RevocationRule[],
  added: readonly RevocationRule[],
  now: number,
): RevocationRule[] {
  return [...rules.filter((rule) => rule.expiresAt > now), ...added].slice(-MAX_REVOCATION_RULES);
}

/** Replaces the revocation file with these rules. */
export function saveRevocations(stateDir: string, rules: readonly RevocationRule[]): void {
  writePrivate(gatewayStateFiles(stateDir).rules, formatRevocations(rules));
}

/** Adds rules to the revocation file without reading it (safe from several processes at once). */
export function appendRevocations(stateDir: string, rules: readonly RevocationRule[]): void {
  if (rules.length === 0) return;
  appendFileSync(gatewayStateFiles(stateDir).rules, formatRevocations(rules), { mode: 0o600 });
}

/** Checks and stores a gateway's keys; the keys by key id. */
export function writeGatewayKeys(stateDir: string, config: GatewayKeys): Map<string, Buffer> {
  const keys = parseKeys(config);
  mkdirSync(stateDir, { recursive: true });
  writePrivate(gatewayStateFiles(stateDir).keys, JSON.stringify(config));
  return keys;
}

/**
 * What a gateway knows from its state directory: its keys (none until configured, or when the
 * file is unreadable: every ticket is then refused) and the unexpired revocations.
 */
export function readGatewayState(
  stateDir: string,
  now: number,
): { computerId: string | undefined; keys: Map<string, Buffer>; rules: RevocationRule[] } {
  const files = gatewayStateFiles(stateDir);
  let rules: RevocationRule[] = [];
  try {
    rules = parseRevocations(readFileSync(files.rules, "utf8"), now);
  } catch {
    // No revocations yet.
  }
  try {
    const config = JSON.parse(readFileSync(files.keys, "utf8")) as GatewayKeys;
    return { computerId: config.computerId, keys: parseKeys(config), rules };
  } catch {
    return { computerId: undefined, keys: new Map(), rules };
  }
}
