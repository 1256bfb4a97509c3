/**
 * The fake computer's gateway (TRM-8): a loopback websocket listener per fake computer that
 * serves the emulated shell (./shell.ts) on `/v1/pty` with the one terminal frame protocol
 * (`@rakazo/protocol/terminal`), so the browser terminal is tested through the sealed
 * capability, the authority and the web proxy without Docker.
 *
 * - Tickets are checked, refused and stored like the supervisor's gateway does, with the same
 *   code (`@rakazo/protocol/gateway-core`): seal, expiry, this computer, revocations; then the
 *   bot's slot generation must still be its running desktop and its terminal started.
 * - State is on disk beside `machine.json` (keys 0600, revocations appended a line each), so
 *   whichever process hosts the listener (the API's, where `target()` is asked) enforces what
 *   another process (the worker) revoked or stopped: it re-reads the machine every
 *   `SWEEP_MS`. In the hosting process revocation and stops close sessions at once.
 * - Sessions end with the gateway's close codes: 4001 revoked, 4002 slot closed, 4003 expired
 *   (a terminal never outlives its control lease), 4004 terminal stopped (TRM-6).
 */
import { randomInt } from "node:crypto";
import { mkdir } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type { Duplex } from "node:stream";
import { CLOSE_EXPIRED, CLOSE_REVOKED, CLOSE_SLOT_CLOSED, TICKET_HEADER } from "@rakazo/protocol";
import type { ScreenClaims } from "@rakazo/protocol/capability";
import {
  type GatewayRejection,
  headerValue,
  policyRejection,
  REJECT_STATUS,
  readGatewayState,
  refuseUpgrade,
  replyJson,
  ruleMatches,
  verifyGatewayTicket,
} from "@rakazo/protocol/gateway-core";
import {
  CLOSE_TERMINAL_STOPPED,
  decodeTerminalFrame,
  encodeTerminalFrame,
  TERMINAL_GATEWAY_PATH,
  TERMINAL_LIMITS,
  TerminalFrameError,
} from "@rakazo/protocol/terminal";
import WebSocket, { WebSocketServer } from "ws";
import type { ScreenGatewayTarget, ScreenRevocationRule } from "../../provider.ts";
import { FakeShell } from "./shell.ts";

/** How often a hosting gateway re-reads what other processes changed. */
const SWEEP_MS = 100;
const MAX_SESSIONS = 64;

/** What the fake keeps in `machine.json` for the gateway. */
export interface FakeGatewayMachine {
  readonly state: "running" | "stopped";
  readonly desktops: Readonly<Record<string, { slot: number; generation: number }>>;
  /** Bots whose terminal is started (`connectTerminal`), with their shells' folder. */
  readonly terminals?: Readonly<Record<string, { cwd: string }>>;
}

/**
 * Whether the gateway serves this ticket now (`screens.check`, and every connect): the shared
 * ticket rules, then the bot's slot generation on its running desktop.
 */
export function checkFakeTicket(
  machineDir: string,
  machine: FakeGatewayMachine | undefined,
  ticket: string | undefined,
  now = Date.now(),
): { ok: true; claims: ScreenClaims } | { ok: false; reason: GatewayRejection } {
  const verdict = verifyGatewayTicket(ticket, readGatewayState(machineDir, now), now);
  if (!verdict.ok) return verdict;
  const desktop = machine?.state === "running" ? machine.desktops[verdict.claims.botId] : undefined;
  if (desktop?.slot !== verdict.claims.slot || desktop.generation !== verdict.claims.generation) {
    return { ok: false, reason: "slot_gone" };
  }
  return verdict;
}

interface Session {
  readonly claims: ScreenClaims;
  readonly socket: WebSocket;
  /** The session's emulated pid (`$$`): each connection has its own shell. */
  readonly pid: number;
  shell?: FakeShell;
  readonly expiry: NodeJS.Timeout;
  closed: boolean;
}

export class FakeTerminalGateway {
  readonly #machineDir: string;
  readonly #workspace: string;
  readonly #load: () => Promise<FakeGatewayMachine | undefined>;
  readonly #onClosed: () => void;
  readonly #server: http.Server;
  readonly #wss = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    maxPayload: TERMINAL_LIMITS.maxFrameBytes,
  });
  readonly #sessions = new Set<Session>();
  #sweeper: NodeJS.Timeout | undefined;
  #sweeping = false;
  #closed = false;

  constructor(options: {
    machineDir: string;
    workspace: string;
    load: () => Promise<FakeGatewayMachine | undefined>;
    onClosed: () => void;
  }) {
    this.#machineDir = options.machineDir;
    this.#workspace = options.workspace;
    this.#load = options.load;
    this.#onClosed = options.onClosed;
    this.#server = http.createServer((request, response) => void this.#onRequest(request, response));
    this.#server.on("upgrade", (request, socket, head) => void this.#onUpgrade(request, socket, head));
    this.#server.requestTimeout = 10_000;
  }

  async start(): Promise<void> {
    await mkdir(this.#machineDir, { recursive: true });
    await new Promise<void>((done, fail) => {
      this.#server.once("error", fail);
      this.#server.listen(0, "127.0.0.1", done);
    });
    // A test double must not keep its process alive; it closes itself once its machine is gone.
    this.#server.unref();
    this.#sweeper = setInterval(() => void this.#sweep(), SWEEP_MS);
    this.#sweeper.unref();
  }

  target(): ScreenGatewayTarget {
    return { transport: "http", url: `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}` };
  }

  sessions(botId?: string): number {
    return [...this.#sessions].filter((s) => botId === undefined || s.claims.botId === botId).length;
  }

  /** Closes the live sessions these rules match (the rules are already on disk). */
  revoke(rules: readonly ScreenRevocationRule[]): number {
    return this.#closeWhere(
      (claims) => rules.some((rule) => ruleMatches(rule, claims)),
      CLOSE_REVOKED,
      "revoked",
    );
  }

  /** Ends a bot's shells (every bot's when omitted). */
  stop(botId: string | undefined, code = CLOSE_TERMINAL_STOPPED, reason = "terminal stopped"): number {
    return this.#closeWhere((claims) => botId === undefined || claims.botId === botId, code, reason);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#sweeper);
    this.stop(undefined, 1001, "gateway stopping");
    this.#wss.close();
    this.#server.closeAllConnections();
    await new Promise<void>((done) => this.#server.close(() => done()));
    this.#onClosed();
  }

  #closeWhere(match: (claims: ScreenClaims) => boolean, code: number, reason: string): number {
    let closed = 0;
    for (const session of [...this.#sessions]) {
      if (match(session.claims)) {
        this.#end(session, code, reason);
        closed += 1;
      }
    }
    return closed;
  }

  /** What another process did: revoked, stopped the terminal, released the desktop, stopped the machine. */
  async #sweep(): Promise<void> {
    if (this.#sweeping || this.#closed) return;
    this.#sweeping = true;
    try {
      const machine = await this.#load();
      if (machine?.state !== "running") {
        await this.close();
        return;
      }
      if (this.#sessions.size === 0) return;
      const { rules } = readGatewayState(this.#machineDir, Date.now());
      this.#closeWhere((claims) => rules.some((rule) => ruleMatches(rule, claims)), CLOSE_REVOKED, "revoked");
      this.#closeWhere(
        (claims) => {
          const desktop = machine.desktops[claims.botId];
          return desktop?.slot !== claims.slot || desktop.generation !== claims.generation;
        },
        CLOSE_SLOT_CLOSED,
        "slot closed",
      );
      this.#closeWhere(
        (claims) => !machine.terminals?.[claims.botId],
        CLOSE_TERMINAL_STOPPED,
        "terminal stopped",
      );
    } catch {
      // Unreadable for a moment (a write in progress): the next sweep reads it again.
    } finally {
      this.#sweeping = false;
    }
  }

  async #onRequest(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    if (request.method !== "GET" || request.url !== "/v1/screen") {
      replyJson(response, 404, { ok: false, reason: "bad_request" });
      return;
    }
    const verdict = checkFakeTicket(this.#machineDir, await this.#load(), ticketOf(request));
    if (!verdict.ok)
      replyJson(response, REJECT_STATUS[verdict.reason], { ok: false, reason: verdict.reason });
    else replyJson(response, 200, { ok: true, policy: verdict.claims.policy });
  }

  async #onUpgrade(request: http.IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    socket.on("error", () => undefined);
    const refuse = (reason: GatewayRejection): void => refuseUpgrade(socket, reason);
    if (request.method !== "GET" || (request.url !== TERMINAL_GATEWAY_PATH && request.url !== "/v1/rfb")) {
      refuse("bad_request");
      return;
    }
    const machine = await this.#load();
    const verdict = checkFakeTicket(this.#machineDir, machine, ticketOf(request));
    if (!verdict.ok) {
      refuse(verdict.reason);
      return;
    }
    const { claims } = verdict;
    const terminalPath = request.url === TERMINAL_GATEWAY_PATH;
    // A terminal ticket opens only the shell; the fake serves no RFB for a screen ticket.
    const refusal =
      policyRejection(terminalPath, claims.policy) ?? (terminalPath ? undefined : "upstream_unavailable");
    if (refusal) {
      refuse(refusal);
      return;
    }
    const terminal = machine?.terminals?.[claims.botId];
    if (!terminal) {
      refuse("terminal_stopped");
      return;
    }
    this.#wss.handleUpgrade(request, socket, head, (ws) => this.#open(ws, claims, terminal.cwd));
  }

  #open(ws: WebSocket, claims: ScreenClaims, cwd: string): void {
    const send = (frame: Parameters<typeof encodeTerminalFrame>[0]) => {
      if (ws.readyState === WebSocket.OPEN) ws.send(encodeTerminalFrame(frame), { binary: true });
    };
    const used = new Set([...this.#sessions].map((s) => s.pid));
    let pid = randomInt(1000, 32_768);
    while (used.has(pid)) pid = randomInt(1000, 32_768);
    const session: Session = {
      claims,
      socket: ws,
      pid,
      // A terminal dies with its control lease, which caps the capability's expiry (TRM-6).
      expiry: setTimeout(
        () => this.#end(session, CLOSE_EXPIRED, "expired"),
        Math.max(0, claims.expiresAt - Date.now()),
      ),
      closed: false,
    };
    session.expiry.unref();
    if (this.#sessions.size >= MAX_SESSIONS || this.#closed) {
      send({ type: "error", code: "too_many_sessions", message: `at most ${MAX_SESSIONS} shells` });
      this.#end(session, 1011, "too_many_sessions");
      return;
    }
    const shell = new FakeShell({
      workspace: this.#workspace,
      cwd: join(this.#workspace, cwd),
      env: { HOME: this.#workspace, USER: "rakazo", LOGNAME: "rakazo", TERM: "xterm-256color" },
      pid,
      output: (text) => send({ type: "data", data: new TextEncoder().encode(text) }),
      exit: (code) => {
        send({ type: "exit", code, signal: null });
        this.#end(session, 1000, "shell exited");
      },
    });
    session.shell = shell;
    this.#sessions.add(session);
    const decoder = new TextDecoder();
    ws.on("message", (data: Buffer, isBinary: boolean) => {
      if (session.closed) return;
      if (!isBinary) {
        send({ type: "error", code: "bad_frame", message: "binary frames only" });
        this.#end(session, 1003, "bad_frame");
        return;
      }
      try {
        const frame = decodeTerminalFrame(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
        if (frame.type === "data") shell.input(decoder.decode(frame.data, { stream: true }));
        else if (frame.type === "resize") shell.resize(frame.cols, frame.rows);
        else throw new TerminalFrameError(`a client does not send ${frame.type} frames`);
      } catch (error) {
        if (!(error instanceof TerminalFrameError)) throw error;
        send({ type: "error", code: "bad_frame", message: error.message });
        this.#end(session, 1008, "bad_frame");
      }
    });
    ws.on("close", () => this.#end(session, 1000, ""));
    ws.on("error", () => this.#end(session, 1006, ""));
  }

  #end(session: Session, code: number, reason: string): void {
    if (session.closed) return;
    session.closed = true;
    clearTimeout(session.expiry);
    this.#sessions.delete(session);
    session.shell?.end();
    if (session.socket.readyState === WebSocket.OPEN) {
      session.socket.close(code === 1006 ? 1000 : code, reason);
      // Do not wait on a client that never answers the close.
      setTimeout(() => session.socket.terminate(), 1000).unref();
    }
  }
}

function ticketOf(request: http.IncomingMessage): string | undefined {
  return headerValue(request, TICKET_HEADER);
}
