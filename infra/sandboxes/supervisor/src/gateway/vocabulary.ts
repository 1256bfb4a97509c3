/**
 * The screen gateway's vocabulary: where it listens, what a slot and a connection are. Tickets,
 * refusals and the key and revocation files are the gateway core's
 * (`@rakazo/protocol/gateway-core`). The listener itself is computer-gateway.ts.
 */

import type { Log } from "../log.ts";
import type { TerminalServerOptions } from "../terminal/terminal-server.ts";

export {
  CLOSE_EXPIRED,
  CLOSE_POLICY,
  CLOSE_REVOKED,
  CLOSE_SLOT_CLOSED,
  TICKET_HEADER,
} from "@rakazo/protocol";
// The ticket rules, refusals and state files are the gateway core's (the fake provider's gateway
// is held to the same), the ticket header and close codes the protocol's (the web proxy reads them).
export {
  type GatewayKeys,
  type GatewayRejection,
  headerValue,
  parseKeys,
  type RevocationRule,
  ruleMatches,
  sameText,
} from "@rakazo/protocol/gateway-core";

import type { ScreenPolicy } from "@rakazo/protocol/capability";

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

export interface ComputerGatewayOptions {
  readonly listen: GatewayListen;
  /** Directory for `gateway.key` and `gateway-revocations.json`. */
  readonly stateDir: string;
  readonly slotAt: (index: number) => GatewaySlot | undefined;
  /**
   * Starts the RFB server of a slot generation unless it serves already (the daemon: x11vnc
   * starts on a desktop's first viewer); rejects when it cannot. None: the socket is served
   * from the start (test and bench fixtures).
   */
  readonly serveRfb?: (index: number, generation: number) => Promise<unknown>;
  readonly log?: Log;
  readonly now?: () => number;
  /** PTY server settings (tests: the uid and shell). */
  readonly terminal?: Omit<TerminalServerOptions, "runDir" | "log">;
}
