/**
 * The screen gateway's vocabulary and pure helpers: where it listens, what a slot and a
 * revocation rule are, why a request is rejected and with which status, and how keys and
 * private files are read and written. The listener itself is ./screen-gateway.ts.
 */
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import type http from "node:http";
import path from "node:path";
import type { TerminalServerOptions } from "./terminal-server.ts";

// The ticket rules are the protocol's (the fake provider's gateway checks tickets the same way).
export {
  type GatewayKeys,
  parseKeys,
  type RevocationRule,
  ruleMatches,
  sameText,
} from "@rakazo/protocol/gateway-ticket";

import type { ScreenPolicy } from "@rakazo/protocol/capability";
import type { GatewayKeys, RevocationRule } from "@rakazo/protocol/gateway-ticket";

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
