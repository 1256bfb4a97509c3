/**
 * The launcher's children (API, worker, web), supervised: a child that exits on its own is
 * restarted with backoff and a log line; too many crashes in a short window give up, and the
 * caller stops the system. Children run in their own process groups, so a terminal's Ctrl-C
 * reaches only the launcher, which then stops them in order. Their JSON lines pass through the
 * console; the line each prints once it serves marks it ready.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import type { Logger } from "@rakazo/log";
import type { Console } from "./console.ts";
import { DEFAULT_RESTART_POLICY, decideRestart, type RestartPolicy } from "./restart-policy.ts";
import type { ChildName } from "./state.ts";

/** The log message each child prints once it is up. */
const READY_MESSAGE: Record<ChildName, string> = {
  api: "api.listening",
  worker: "worker.started",
  web: "web.listening",
};

interface ChildEvents {
  /** A child (re)started: its pid changed. */
  started(name: ChildName, pid: number): void;
  ready(name: ChildName, restarts: number): void;
  /** Crashed too often: the system must stop. */
  gaveUp(name: ChildName, crashes: number, windowMs: number): void;
}

export interface ChildrenOptions {
  readonly entry: (name: ChildName) => string;
  /** Each child's environment (the web process gets no provider keys). */
  readonly env: (name: ChildName) => NodeJS.ProcessEnv;
  readonly log: Logger;
  readonly console: Console;
  readonly events: ChildEvents;
  readonly policy?: RestartPolicy;
}

interface Supervised {
  process?: ChildProcess;
  readonly crashes: number[];
  restarts: number;
  timer?: NodeJS.Timeout;
}

export class Children {
  private readonly supervised = new Map<ChildName, Supervised>();
  private stopping = false;

  private readonly options: ChildrenOptions;

  constructor(options: ChildrenOptions) {
    this.options = options;
  }

  start(name: ChildName): void {
    const entry = this.supervised.get(name) ?? { crashes: [], restarts: 0 };
    this.supervised.set(name, entry);
    const child = spawn(process.execPath, [this.options.entry(name)], {
      env: this.options.env(name),
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    entry.process = child;
    if (child.pid) this.options.events.started(name, child.pid);
    const ready = READY_MESSAGE[name];
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on("line", (line) => {
      this.options.console.log(line);
      if (line.includes(`"msg":"${ready}"`)) this.options.events.ready(name, entry.restarts);
    });
    child.stderr?.on("data", (chunk: Buffer) => process.stderr.write(chunk));
    child.once("exit", (code, signal) => this.exited(name, entry, child, code, signal));
  }

  private exited(
    name: ChildName,
    entry: Supervised,
    child: ChildProcess,
    code: number | null,
    signal: NodeJS.Signals | null,
  ): void {
    if (entry.process !== child) return;
    entry.process = undefined;
    if (this.stopping) return;
    const policy = this.options.policy ?? DEFAULT_RESTART_POLICY;
    const decision = decideRestart(entry.crashes, Date.now(), policy);
    if (!decision.restart) {
      this.options.log.error("launcher.child_gave_up", {
        child: name,
        code,
        signal,
        crashes: decision.crashesInWindow,
        windowSeconds: policy.windowMs / 1_000,
      });
      this.options.events.gaveUp(name, decision.crashesInWindow, policy.windowMs);
      return;
    }
    this.options.log.warn("launcher.child_restarting", {
      child: name,
      code,
      signal,
      inMs: decision.delayMs,
      crashesInWindow: decision.crashesInWindow,
    });
    entry.restarts += 1;
    entry.timer = setTimeout(() => {
      entry.timer = undefined;
      if (!this.stopping) this.start(name);
    }, decision.delayMs);
  }

  pid(name: ChildName): number | undefined {
    return this.supervised.get(name)?.process?.pid;
  }

  /**
   * `signal` (default SIGTERM) to every child, SIGKILL to any still running after its grace
   * (default 20 s); resolves when all exited.
   */
  async stop(
    options: { graceMs?: (name: ChildName) => number; signal?: (name: ChildName) => NodeJS.Signals } = {},
  ): Promise<void> {
    this.stopping = true;
    const running: Promise<void>[] = [];
    for (const [name, entry] of this.supervised) {
      if (entry.timer) clearTimeout(entry.timer);
      const child = entry.process;
      if (!child || child.exitCode !== null || child.signalCode !== null) continue;
      const exited = new Promise<void>((done) => child.once("exit", () => done()));
      child.kill(options.signal?.(name) ?? "SIGTERM");
      const killer = setTimeout(() => child.kill("SIGKILL"), options.graceMs?.(name) ?? 20_000);
      running.push(exited.then(() => clearTimeout(killer)));
    }
    await Promise.all(running);
  }

  /** Last resort when the launcher itself is exiting abruptly: no child outlives it. */
  killAll(): void {
    for (const entry of this.supervised.values()) {
      const child = entry.process;
      if (child?.pid && child.exitCode === null) {
        try {
          process.kill(child.pid, "SIGTERM");
        } catch {}
      }
    }
  }
}
