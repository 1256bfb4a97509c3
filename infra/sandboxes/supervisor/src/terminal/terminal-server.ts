/**
 * The PTY server (TRM-4..6): started beside the screen gateway on first use (`terminal.start`),
 * it gives every websocket the gateway hands it (a `terminal` ticket on `/v1/pty`) its own shell.
 *
 * - Shells run as the supervisor's own uid, the workspace user, never root (TRM-5): a supervisor
 *   running as root refuses to start one. They get the supervisor's environment, which is the
 *   bot shell tool's (tool-env.ts), and start in the bot's folder.
 * - Where the uid has no passwd entry, the session gets its own passwd/group files naming it
 *   `rakazo` and runs with nss_wrapper preloaded; /etc/passwd is never touched.
 * - Each session has a directory `<run dir>/terminals/<session id>/` (0700); destroying the
 *   session kills its process group and removes that directory. `stop` destroys every session
 *   of a bot (or all), which is what releasing control, expiry and screen teardown do (TRM-6).
 * - Frames are `@rakazo/protocol/terminal`, one per websocket message.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chownSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Duplex, Writable } from "node:stream";
import {
  CLOSE_TERMINAL_STOPPED,
  decodeTerminalFrame,
  encodeTerminalFrame,
  TERMINAL_LIMITS,
  type TerminalErrorCode,
  TerminalFrameError,
} from "@rakazo/protocol/terminal";
import { ClientFrameParser, closeWebSocket, frameHeader, OPCODE } from "../gateway/ws-frame.ts";
import { type Log, silentLog } from "../log.ts";
import { PTY_HELPER_SOURCE } from "./pty-helper.ts";

/** Where nss_wrapper may be installed (Debian's libnss-wrapper). */
const NSS_WRAPPER_PATHS = [
  "/usr/lib/x86_64-linux-gnu/libnss_wrapper.so",
  "/usr/lib/aarch64-linux-gnu/libnss_wrapper.so",
  "/usr/lib/libnss_wrapper.so",
];
/** The name an unnamed uid gets inside its terminal (TRM-5). */
const TERMINAL_USER_NAME = "rakazo";
const MAX_SESSIONS = 64;
/** Supervisor settings that are no business of an interactive shell. */
const PRIVATE_ENV = /^RAKAZO_(GATEWAY|RUN_DIR|SOCKET|SUPERVISOR)/;

export interface TerminalBotConfig {
  /** Absolute directory the bot's shells start in. */
  readonly cwd: string;
  /** Added to the supervisor's environment. */
  readonly env?: Readonly<Record<string, string>>;
}

export interface TerminalServerOptions {
  readonly runDir: string;
  readonly log?: Log;
  /** The uid shells run as; the supervisor's own (tests only). */
  readonly uid?: number;
  readonly gid?: number;
  readonly python?: string;
  readonly shell?: readonly string[];
}

export interface TerminalSessionInfo {
  readonly sessionId: string;
  readonly botId: string;
  readonly pid: number | undefined;
  readonly dir: string;
}

/** One shell on one websocket. `destroy` is idempotent. */
export interface TerminalSession extends TerminalSessionInfo {
  destroy(code?: number, reason?: string): void;
}

export class TerminalServer {
  readonly #options: TerminalServerOptions;
  readonly #log: Log;
  readonly #bots = new Map<string, TerminalBotConfig>();
  readonly #sessions = new Set<TerminalSession>();

  constructor(options: TerminalServerOptions) {
    this.#options = options;
    this.#log = options.log ?? silentLog;
  }

  get dir(): string {
    return path.join(this.#options.runDir, "terminals");
  }

  /** Starts (or joins) the server for a bot: later sessions of that bot start in `cwd`. */
  start(botId: string, config: TerminalBotConfig): { sessions: number } {
    this.#bots.set(botId, config);
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    return { sessions: this.sessions(botId).length };
  }

  started(botId: string): boolean {
    return this.#bots.has(botId);
  }

  sessions(botId?: string): TerminalSessionInfo[] {
    return [...this.#sessions]
      .filter((session) => botId === undefined || session.botId === botId)
      .map(({ sessionId, botId: bot, pid, dir }) => ({ sessionId, botId: bot, pid, dir }));
  }

  /** Stops the server for a bot (every bot when omitted): its shells end and their files go. */
  stop(botId?: string, code = CLOSE_TERMINAL_STOPPED, reason = "terminal stopped"): number {
    let closed = 0;
    for (const session of [...this.#sessions]) {
      if (botId === undefined || session.botId === botId) {
        session.destroy(code, reason);
        closed += 1;
      }
    }
    if (botId === undefined) this.#bots.clear();
    else this.#bots.delete(botId);
    return closed;
  }

  /**
   * Serves one upgraded websocket (the 101 is already written). `onEnd` runs once, when the
   * session is gone for any reason.
   */
  open(client: Duplex, botId: string, onEnd: (code: number, reason: string) => void): TerminalSession {
    const sessionId = randomBytes(8).toString("hex");
    const dir = path.join(this.dir, sessionId);
    let child: ChildProcess | undefined;
    let ended = false;
    const sendFrame = (bytes: Uint8Array): boolean =>
      client.write(Buffer.concat([frameHeader(OPCODE.binary, bytes.byteLength), bytes]));
    const session: TerminalSession = {
      sessionId,
      botId,
      dir,
      get pid() {
        return child?.pid;
      },
      destroy: (code = 1000, reason = "") => {
        if (ended) return;
        ended = true;
        this.#sessions.delete(session);
        const helper = child;
        if (helper?.pid && helper.exitCode === null && helper.signalCode === null) {
          // SIGTERM makes the helper hang its shell up (SIGHUP to the shell's own session, made
          // by pty.fork), reap it (SIGKILL after 300 ms) and exit; a helper still there after
          // 600 ms is killed with its group.
          helper.kill("SIGTERM");
          const pid = helper.pid;
          setTimeout(() => {
            if (helper.exitCode === null && helper.signalCode === null) {
              try {
                process.kill(-pid, "SIGKILL");
              } catch {
                helper.kill("SIGKILL");
              }
            }
          }, 600).unref();
        }
        rmSync(dir, { recursive: true, force: true });
        closeWebSocket(client, code, reason);
        this.#log({ event: "terminal.session.closed", sessionId, code });
        onEnd(code, reason);
      },
    };
    const fail = (code: TerminalErrorCode, message: string, closeCode = 1011): TerminalSession => {
      sendFrame(encodeTerminalFrame({ type: "error", code, message }));
      session.destroy(closeCode, code);
      return session;
    };
    this.#sessions.add(session);
    const config = this.#bots.get(botId);
    if (!config) return fail("stopped", "the terminal server is not started for this bot");
    if (this.#sessions.size > MAX_SESSIONS)
      return fail("too_many_sessions", `at most ${MAX_SESSIONS} shells`);
    const uid = this.#options.uid ?? process.getuid?.() ?? 0;
    const gid = this.#options.gid ?? process.getgid?.() ?? 0;
    if (uid === 0) return fail("spawn_failed", "shells never run as root");
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      const env = shellEnv(config, dir, uid, gid);
      if (this.#options.uid !== undefined) {
        // A root test daemon runs shells as another uid: the session files must be theirs.
        for (const owned of [
          this.dir,
          dir,
          ...(env.NSS_WRAPPER_PASSWD ? [path.join(dir, "passwd"), path.join(dir, "group")] : []),
        ]) {
          chownSync(owned, uid, gid);
        }
      }
      child = spawn(
        this.#options.python ?? "python3",
        [
          "-c",
          PTY_HELPER_SOURCE,
          "80",
          "24",
          ...(this.#options.shell ?? (existsSync("/bin/bash") ? ["/bin/bash", "-l"] : ["/bin/sh"])),
        ],
        {
          cwd: config.cwd,
          env,
          detached: true,
          stdio: ["pipe", "pipe", "ignore", "pipe"],
          ...(this.#options.uid !== undefined ? { uid, gid } : {}),
        },
      );
    } catch (error) {
      return fail("spawn_failed", (error as Error).message);
    }
    const shell = child;
    const control = shell.stdio[3] as Writable;
    shell.stdin?.on("error", () => undefined);
    control.on("error", () => undefined);
    shell.on("error", (error) => {
      if (!ended) fail("spawn_failed", error.message);
    });
    this.#log({ event: "terminal.session.opened", sessionId, botId, pid: shell.pid });

    // Shell → browser: one data frame per read; reading pauses while the browser lags.
    shell.stdout?.on("data", (chunk: Buffer) => {
      if (ended) return;
      if (!sendFrame(encodeTerminalFrame({ type: "data", data: chunk }))) {
        shell.stdout?.pause();
        client.once("drain", () => shell.stdout?.resume());
      }
    });
    shell.on("exit", (code, signal) => {
      if (ended) return;
      sendFrame(encodeTerminalFrame({ type: "exit", code: code ?? null, signal: signal ?? null }));
      session.destroy(1000, "shell exited");
    });

    // Browser → shell: websocket frames, re-assembled into messages (≤ 1 MiB), then decoded.
    const parser = new ClientFrameParser();
    let message: Buffer[] = [];
    let messageBytes = 0;
    const onMessage = (bytes: Buffer): void => {
      let frame: ReturnType<typeof decodeTerminalFrame>;
      try {
        frame = decodeTerminalFrame(bytes);
      } catch (error) {
        if (error instanceof TerminalFrameError) fail("bad_frame", error.message, 1008);
        return;
      }
      if (frame.type === "data") {
        if (!shell.stdin?.write(frame.data)) {
          client.pause();
          shell.stdin?.once("drain", () => client.resume());
        }
      } else if (frame.type === "resize") control.write(`${frame.cols} ${frame.rows}\n`);
      else fail("bad_frame", `a client does not send ${frame.type} frames`, 1008);
    };
    client.on("data", (chunk: Buffer) => {
      if (ended) return;
      const parsed = parser.push(chunk);
      for (const piece of parsed.frames) {
        if (ended) return;
        if (piece.opcode === OPCODE.binary || piece.opcode === OPCODE.continuation) {
          messageBytes += piece.payload.length;
          if (messageBytes > TERMINAL_LIMITS.maxFrameBytes) {
            fail("bad_frame", "message too large", 1009);
            return;
          }
          message.push(Buffer.from(piece.payload));
          if (piece.fin) {
            const whole = Buffer.concat(message);
            message = [];
            messageBytes = 0;
            onMessage(whole);
          }
        } else if (piece.opcode === OPCODE.ping) {
          client.write(Buffer.concat([frameHeader(OPCODE.pong, piece.payload.length), piece.payload]));
        } else if (piece.opcode === OPCODE.close) {
          session.destroy(1000, "");
          return;
        } else if (piece.opcode === OPCODE.text) {
          fail("bad_frame", "binary frames only", 1003);
          return;
        }
      }
      if (parsed.error) session.destroy(parsed.error.code, parsed.error.reason);
    });
    client.on("close", () => session.destroy(1000, ""));
    client.on("error", () => session.destroy(1006, ""));
    return session;
  }
}

/** The shell's environment: the supervisor's (the bot shell tool's), the bot's, and TRM-5 naming. */
function shellEnv(config: TerminalBotConfig, dir: string, uid: number, gid: number): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!PRIVATE_ENV.test(key)) env[key] = value;
  }
  Object.assign(env, config.env ?? {}, { TERM: "xterm-256color", COLORTERM: "truecolor" });
  const name = passwdName(uid);
  if (name !== undefined) {
    env.USER = name;
    env.LOGNAME = name;
    return env;
  }
  // No passwd entry: name the uid through nss_wrapper for this session only (TRM-5).
  const home = env.HOME ?? config.cwd;
  writeFileSync(
    path.join(dir, "passwd"),
    `${TERMINAL_USER_NAME}:x:${uid}:${gid}:${TERMINAL_USER_NAME}:${home}:/bin/bash\n`,
    { mode: 0o600 },
  );
  writeFileSync(path.join(dir, "group"), `${TERMINAL_USER_NAME}:x:${gid}:\n`, { mode: 0o600 });
  const library = NSS_WRAPPER_PATHS.find((candidate) => existsSync(candidate));
  if (library) {
    env.LD_PRELOAD = [library, env.LD_PRELOAD].filter(Boolean).join(":");
    env.NSS_WRAPPER_PASSWD = path.join(dir, "passwd");
    env.NSS_WRAPPER_GROUP = path.join(dir, "group");
  }
  env.USER = TERMINAL_USER_NAME;
  env.LOGNAME = TERMINAL_USER_NAME;
  env.HOME = home;
  return env;
}

/** The uid's name in /etc/passwd, if it has an entry. */
function passwdName(uid: number): string | undefined {
  let text: string;
  try {
    text = readFileSync("/etc/passwd", "utf8");
  } catch {
    return undefined;
  }
  for (const line of text.split("\n")) {
    const fields = line.split(":");
    if (fields.length >= 3 && fields[2] === String(uid)) return fields[0];
  }
  return undefined;
}
