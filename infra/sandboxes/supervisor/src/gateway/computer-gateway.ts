/**
 * `ComputerGateway`: the one listener per computer. It serves every desktop's screen on it
 * (SCR-1), every bot's terminal (`/v1/pty`, TRM-4, its `terminal` server) and, on TCP, the
 * supervisor's RPC to the host (`/v1/rpc/`, rpc.ts).
 *
 * - A request carries a gateway ticket (a capability sealed with this computer's gateway key,
 *   @rakazo/protocol's capability codec) in the `x-rakazo-screen-ticket` header, never in the
 *   URL. It is verified here without any database: seal, expiry, computer, revocation list, and the slot's
 *   current generation (SCR-2: a recycled slot never accepts an old ticket).
 * - `GET /v1/screen` answers whether the ticket would be served; an upgrade on `/v1/rfb` opens
 *   a websocket bridged to exactly `vnc/slot<index>-g<generation>.sock`, after asking the
 *   desktops to serve it (`serveRfb`: x11vnc starts on a desktop's first viewer).
 * - View tickets go through `RfbViewFilter` (input dropped in the gateway); control tickets are
 *   passed through untouched (rfb-bridge.ts; client input is paced in client-input.ts).
 * - `revoke` closes matching live connections at once (close code 4001); `closeSlot` closes a
 *   slot's connections before teardown (4002, SCR-3); a control connection closes when its
 *   capability expires (4003).
 * Keys and revocations are persisted in the run dir (0600) so a restarted daemon keeps them.
 */
export * from "./vocabulary.ts";

import { randomBytes } from "node:crypto";
import { chmodSync, mkdirSync, rmSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import type { Duplex } from "node:stream";
import type { ScreenClaims } from "@rakazo/protocol/capability";
import {
  addRevocations,
  type GatewayRejection,
  policyRejection,
  REJECT_STATUS,
  readGatewayState,
  refuseUpgrade,
  replyJson,
  saveRevocations,
  verifyGatewayTicket,
  writeGatewayKeys,
} from "@rakazo/protocol/gateway-core";
import { TERMINAL_GATEWAY_PATH } from "@rakazo/protocol/terminal";
import { errorMessage, type Log, silentLog } from "../log.ts";
import { TerminalServer } from "../terminal/terminal-server.ts";
import { bridgeRfb, dialRfb } from "./rfb-bridge.ts";
import { type GatewayRpc, serveGatewayRpc } from "./rpc.ts";
import {
  CLOSE_EXPIRED,
  CLOSE_REVOKED,
  CLOSE_SLOT_CLOSED,
  type ComputerGatewayOptions,
  type ConnectionInfo,
  type GatewayKeys,
  type GatewaySlot,
  headerValue,
  type RevocationRule,
  ruleMatches,
  TICKET_HEADER,
} from "./vocabulary.ts";
import { closeWebSocket, switchingProtocols, validWebSocketKey } from "./ws-frame.ts";

interface Connection {
  readonly info: { -readonly [K in keyof ConnectionInfo]: ConnectionInfo[K] };
  readonly claims: ScreenClaims;
  readonly client: Duplex;
  /** The desktop's RFB socket, or the connection's shell (TRM-4). */
  readonly upstream: { destroy(): void };
  closed: boolean;
  expiry?: NodeJS.Timeout;
}

export class ComputerGateway {
  readonly #options: ComputerGatewayOptions;
  readonly #now: () => number;
  readonly #log: Log;
  readonly #server: http.Server;
  readonly #connections = new Set<Connection>();
  #computerId: string | undefined;
  #keys = new Map<string, Buffer>();
  #rules: RevocationRule[] = [];
  #rpc: GatewayRpc | undefined;
  /** The PTY server beside the gateway (TRM-4): shells for `terminal` tickets on `/v1/pty`. */
  readonly terminal: TerminalServer;

  constructor(options: ComputerGatewayOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#log = options.log ?? silentLog;
    this.terminal = new TerminalServer({ runDir: options.stateDir, log: this.#log, ...options.terminal });
    // Unreadable keys count as not configured: every ticket is refused until reconfigured.
    const state = readGatewayState(options.stateDir, this.#now());
    this.#rules = state.rules;
    this.#keys = state.keys;
    this.#computerId = state.computerId;
    this.#server = http.createServer((request, response) => this.#onRequest(request, response));
    this.#server.on("upgrade", (request, socket) => this.#onUpgrade(request, socket));
    this.#server.requestTimeout = 10_000;
    this.#server.headersTimeout = 10_000;
    // Longer than the clients' own idle timeouts (undici: the server's hint less 1 s; the
    // emulators' and edge proxies' upstream pools), so an idle RPC connection is closed by its
    // client, never here while a request may be on its way (a 502 for a call that never ran).
    // Only holders of the provider's port auth reach a TCP gateway at all.
    this.#server.keepAliveTimeout = 30_000;
  }

  async start(): Promise<void> {
    const listen = this.#options.listen;
    if ("path" in listen) {
      mkdirSync(path.dirname(listen.path), { recursive: true });
      rmSync(listen.path, { force: true });
    }
    await new Promise<void>((resolve, reject) => {
      this.#server.once("error", reject);
      if ("path" in listen) this.#server.listen(listen.path, resolve);
      else this.#server.listen(listen.port, listen.host, resolve);
    });
    if ("path" in listen) chmodSync(listen.path, 0o660);
  }

  /** Serves the supervisor's RPC under `/v1/rpc/` to holders of its key (rpc.ts). */
  serveRpc(rpc: GatewayRpc): void {
    this.#rpc = rpc;
  }

  /** The bound TCP port (tests listen on port 0). */
  get port(): number | undefined {
    const address = this.#server.address();
    return typeof address === "object" && address ? address.port : undefined;
  }

  async close(): Promise<void> {
    for (const connection of this.#connections) this.#end(connection, 1001, "gateway stopping");
    this.terminal.stop(undefined, 1001, "gateway stopping");
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
    if ("path" in this.#options.listen) rmSync(this.#options.listen.path, { force: true });
  }

  /** Sets this computer's id and gateway keys (supervisor RPC `screens.configure`). */
  configure(config: GatewayKeys): { configured: true; kids: string[] } {
    const keys = writeGatewayKeys(this.#options.stateDir, config);
    this.#computerId = config.computerId;
    this.#keys = keys;
    return { configured: true, kids: [...keys.keys()] };
  }

  /** Adds revocation rules and closes every live connection they match (`screens.revoke`). */
  revoke(rules: readonly RevocationRule[]): { closed: number } {
    this.#rules = addRevocations(this.#rules, rules, this.#now());
    saveRevocations(this.#options.stateDir, this.#rules);
    let closed = 0;
    for (const connection of [...this.#connections]) {
      if (rules.some((rule) => ruleMatches(rule, connection.claims))) {
        this.#log({ event: "gateway.connection.revoked", connectionId: connection.info.connectionId });
        this.#end(connection, CLOSE_REVOKED, "revoked");
        closed += 1;
      }
    }
    return { closed };
  }

  /** Whether a ticket's claims are revoked (`screens.check`, used by the API's authority). */
  isRevoked(claims: ScreenClaims): boolean {
    return this.#rules.some((rule) => ruleMatches(rule, claims));
  }

  /** Closes the connections of one slot generation before it is torn down (SCR-3). */
  closeSlot(index: number, generation: number): number {
    let closed = 0;
    // Screen teardown stops the bot's terminal server too (TRM-6).
    const slot = this.#options.slotAt(index);
    if (slot?.generation === generation) this.terminal.stop(slot.botId, CLOSE_SLOT_CLOSED, "slot closed");
    for (const connection of [...this.#connections]) {
      if (connection.claims.slot === index && connection.claims.generation === generation) {
        this.#end(connection, CLOSE_SLOT_CLOSED, "slot closed");
        closed += 1;
      }
    }
    return closed;
  }

  connections(): ConnectionInfo[] {
    return [...this.#connections].map((connection) => ({ ...connection.info }));
  }

  /** Verifies a ticket; the slot it may reach on success. */
  verify(
    ticket: string | undefined,
  ): { ok: true; claims: ScreenClaims; slot: GatewaySlot } | { ok: false; reason: GatewayRejection } {
    const opened = verifyGatewayTicket(
      ticket,
      { computerId: this.#computerId, keys: this.#keys, rules: this.#rules },
      this.#now(),
    );
    if (!opened.ok) return opened;
    const { claims } = opened;
    const slot = this.#options.slotAt(claims.slot);
    if (
      !slot ||
      slot.generation !== claims.generation ||
      slot.botId !== claims.botId ||
      slot.state !== "running"
    ) {
      return { ok: false, reason: "slot_gone" };
    }
    return { ok: true, claims, slot };
  }

  // ------------------------------------------------------------------ transport

  #onRequest(request: http.IncomingMessage, response: http.ServerResponse): void {
    if (serveGatewayRpc(request, response, this.#rpc, this.#log)) return;
    if (request.method !== "GET" || request.url !== "/v1/screen") {
      replyJson(response, 404, { ok: false, reason: "bad_request" });
      return;
    }
    const verdict = this.verify(headerValue(request, TICKET_HEADER));
    if (!verdict.ok) {
      this.#log({ event: "gateway.rejected", reason: verdict.reason, transport: "http" });
      replyJson(response, REJECT_STATUS[verdict.reason], { ok: false, reason: verdict.reason });
      return;
    }
    replyJson(response, 200, {
      ok: true,
      policy: verdict.claims.policy,
      slot: { index: verdict.slot.index, generation: verdict.slot.generation },
    });
  }

  #onUpgrade(request: http.IncomingMessage, socket: Duplex): void {
    socket.on("error", () => undefined);
    const refuse = (reason: GatewayRejection): void => {
      this.#log({ event: "gateway.rejected", reason, transport: "websocket" });
      refuseUpgrade(socket, reason);
    };
    const key = headerValue(request, "sec-websocket-key");
    const terminal = request.url === TERMINAL_GATEWAY_PATH;
    if (
      request.method !== "GET" ||
      (request.url !== "/v1/rfb" && !terminal) ||
      (headerValue(request, "upgrade") ?? "").toLowerCase() !== "websocket" ||
      headerValue(request, "sec-websocket-version") !== "13" ||
      !validWebSocketKey(key)
    ) {
      refuse("bad_request");
      return;
    }
    const verdict = this.verify(headerValue(request, TICKET_HEADER));
    if (!verdict.ok) {
      refuse(verdict.reason);
      return;
    }
    const { claims, slot } = verdict;
    const policy = claims.policy;
    // A terminal ticket opens the PTY server only (TRM-4), never the screen, and the reverse.
    const wrongPolicy = policyRejection(terminal, policy);
    if (wrongPolicy) {
      refuse(wrongPolicy);
      return;
    }
    if (terminal) {
      this.#openTerminal(claims, socket, key, refuse);
      return;
    }
    if (policy === "terminal") return; // refused above; narrows the policy for the bridge
    void this.#openRfb({ ...claims, policy }, slot, socket, key, refuse);
  }

  /**
   * The desktop's RFB server is started (its first viewer) and its socket connected before the
   * 101, so a desktop that cannot serve is an HTTP error, not a websocket that closes at once:
   * 502 `upstream_unavailable` when x11vnc did not start (the next viewer starts it afresh),
   * 410 `slot_gone` when the slot was torn down meanwhile.
   */
  async #openRfb(
    claims: ScreenClaims & { policy: "view" | "control" },
    slot: GatewaySlot,
    socket: Duplex,
    key: string,
    refuse: (reason: GatewayRejection) => void,
  ): Promise<void> {
    const current = (): boolean => {
      const now = this.#options.slotAt(claims.slot);
      return now?.generation === claims.generation && now.state === "running";
    };
    if (this.#options.serveRfb) {
      try {
        await this.#options.serveRfb(claims.slot, claims.generation);
      } catch (error) {
        this.#log({ event: "gateway.rfb.unavailable", slot: claims.slot, message: errorMessage(error) });
        if (!socket.destroyed) refuse(current() ? "upstream_unavailable" : "slot_gone");
        return;
      }
    }
    if (socket.destroyed) return;
    const { upstream, reader } = dialRfb(slot.vncSocket);
    let connected = false;
    upstream.once("error", () => {
      if (!connected) refuse("upstream_unavailable");
    });
    upstream.once("connect", () => {
      connected = true;
      if (socket.destroyed || !current() || this.isRevoked(claims)) {
        // Revoked or torn down while connecting.
        upstream.destroy();
        if (!socket.destroyed) refuse(current() ? "revoked" : "slot_gone");
        return;
      }
      socket.write(switchingProtocols(key));
      const connection = this.#register(claims, socket, upstream);
      bridgeRfb({
        client: socket,
        upstream,
        reader,
        view: claims.policy === "view",
        end: (code, reason) => this.#end(connection, code, reason),
        dropped: (count) => {
          connection.info.droppedInput += count;
        },
        isClosed: () => connection.closed,
      });
    });
  }

  /** `/v1/pty` for a `terminal` ticket, only while the bot's server runs (TRM-4, TRM-6). */
  #openTerminal(
    claims: ScreenClaims,
    socket: Duplex,
    key: string,
    refuse: (reason: GatewayRejection) => void,
  ): void {
    if (!this.terminal.started(claims.botId)) {
      refuse("terminal_stopped");
      return;
    }
    socket.write(switchingProtocols(key));
    if ("setNoDelay" in socket && typeof socket.setNoDelay === "function") socket.setNoDelay(true);
    const shell: { session?: { destroy(): void } } = {};
    const connection = this.#register(claims, socket, { destroy: () => shell.session?.destroy() });
    shell.session = this.terminal.open(socket, claims.botId, (code, reason) =>
      this.#end(connection, code, reason),
    );
  }

  #register(claims: ScreenClaims, client: Duplex, upstream: { destroy(): void }): Connection {
    const connection: Connection = {
      info: {
        connectionId: randomBytes(8).toString("hex"),
        capabilityId: claims.id,
        botId: claims.botId,
        slot: claims.slot,
        generation: claims.generation,
        policy: claims.policy,
        startedAt: this.#now(),
        droppedInput: 0,
      },
      claims,
      client,
      upstream,
      closed: false,
    };
    this.#connections.add(connection);
    // Control and terminal die with their lease (TKO-1, CMP-3, TRM-6): the API caps such a
    // capability's expiry at the control lease's, so the connection closes then; a renewed
    // lease means a new capability. View connections stay open past expiry, which only gates
    // connecting.
    if (claims.policy !== "view") {
      connection.expiry = setTimeout(
        () => this.#end(connection, CLOSE_EXPIRED, "expired"),
        Math.max(0, claims.expiresAt - this.#now()),
      );
      connection.expiry.unref();
    }
    this.#log({
      event: "gateway.connection.opened",
      connectionId: connection.info.connectionId,
      policy: claims.policy,
      slot: claims.slot,
      generation: claims.generation,
    });
    return connection;
  }

  #end(connection: Connection, code: number, reason: string): void {
    if (connection.closed) return;
    connection.closed = true;
    clearTimeout(connection.expiry);
    this.#connections.delete(connection);
    closeWebSocket(connection.client, code, reason);
    connection.upstream.destroy();
    this.#log({
      event: "gateway.connection.closed",
      connectionId: connection.info.connectionId,
      code,
      durationMs: this.#now() - connection.info.startedAt,
      droppedInput: connection.info.droppedInput,
    });
  }
}
