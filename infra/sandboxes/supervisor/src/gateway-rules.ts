/**
 * The screen gateway's vocabulary and pure helpers: where it listens, what a slot and a
 * revocation rule are, why a request is rejected and with which status, and how keys and
 * private files are read and written. The listener itself is ./screen-gateway.ts.
 */
import { timingSafeEqual } from "node:crypto";
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import type http from "node:http";
import path from "node:path";
import { isKeyId, type ScreenClaims, type ScreenPolicy } from "@rakazo/protocol/capability";
import type { TerminalServerOptions } from "./terminal-server.ts";

// The ticket header and close codes are the protocol's: the web proxy reads the same ones.
export {
  CLOSE_EXPIRED,
  CLOSE_POLICY,
  CLOSE_REVOKED,
  CLOSE_SLOT_CLOSED,
  TICKET_HEADER,
} from "@rakazo/protocol";

export type GatewayListen = { readonly path: string } | { readonly host: string; readonly port: number };

/** Parses `unix:<path>` / `tcp:<host>:<port>` (or a bare path). */
export function parseGatewayListen(value: string): GatewayListen {
  if (value.startsWith("tcp:")) {
    const rest = value.slice(4);
    const colon = rest.lastIndexOf(":");
    const port = Number(rest.slice(colon + 1));
    if (colon <= 0 || !Number.isInteger(port) || port < 0 || port > 65_535) {
      throw new Error(`invalid gateway listen address ${JSON.stringify(value)}`);
    }
    return { host: rest.slice(0, colon), port };
  }
  return { path: value.startsWith("unix:") ? value.slice(5) : value };
}

export interface GatewaySlot {
  readonly index: number;
  readonly generation: number;
  readonly botId: string;
  readonly state: string;
  readonly vncSocket: string;
}

export type RejectReason =
  | "missing_ticket"
  | "not_configured"
  | "malformed"
  | "unknown_key"
  | "forged"
  | "expired"
  | "wrong_computer"
  | "revoked"
  | "slot_gone"
  | "bad_request"
  | "wrong_policy"
  | "terminal_stopped"
  | "upstream_unavailable";

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

export interface ConnectionInfo {
  readonly connectionId: string;
  readonly capabilityId: string;
  readonly botId: string;
  readonly slot: number;
  readonly generation: number;
  readonly policy: ScreenPolicy;
  readonly startedAt: number;
  readonly droppedInput: number;
}

export interface ScreenGatewayOptions {
  readonly listen: GatewayListen;
  /** Directory for `gateway.key` and `gateway-revocations.json`. */
  readonly stateDir: string;
  readonly slotAt: (index: number) => GatewaySlot | undefined;
  readonly log?: (event: Record<string, unknown>) => void;
  readonly now?: () => number;
  /** PTY server settings (tests: the uid and shell). */
  readonly terminal?: Omit<TerminalServerOptions, "runDir" | "log">;
}

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

export function writePrivate(file: string, text: string): void {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, text, { mode: 0o600 });
  renameSync(tmp, file);
}

export function headerValue(request: http.IncomingMessage, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

export function statusFor(reason: RejectReason): number {
  switch (reason) {
    case "bad_request":
      return 400;
    case "missing_ticket":
    case "malformed":
    case "unknown_key":
    case "forged":
      return 401;
    case "expired":
    case "revoked":
    case "wrong_computer":
    case "wrong_policy":
      return 403;
    case "slot_gone":
    case "terminal_stopped":
      return 410;
    case "not_configured":
      return 503;
    case "upstream_unavailable":
      return 502;
  }
}

/** Where the gateway keeps its keys and revocations (0600 files in the run dir). */
export function gatewayStateFiles(stateDir: string): { keys: string; rules: string } {
  return { keys: path.join(stateDir, "gateway.key"), rules: path.join(stateDir, "gateway-revocations.json") };
}

/** What a restarted gateway knows: its keys (if configured yet) and the unexpired revocations. */
export function readGatewayState(
  stateDir: string,
  now: number,
): { config?: GatewayKeys; rules: RevocationRule[] } {
  const files = gatewayStateFiles(stateDir);
  let config: GatewayKeys | undefined;
  try {
    config = JSON.parse(readFileSync(files.keys, "utf8")) as GatewayKeys;
  } catch {
    // Not configured yet: every ticket is refused until the host configures the gateway.
  }
  let rules: RevocationRule[] = [];
  try {
    const stored = JSON.parse(readFileSync(files.rules, "utf8")) as RevocationRule[];
    if (Array.isArray(stored)) rules = stored.filter((rule) => rule.expiresAt > now);
  } catch {
    rules = [];
  }
  return { ...(config ? { config } : {}), rules };
}
