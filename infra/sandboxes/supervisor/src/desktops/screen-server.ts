/**
 * A desktop's RFB server: x11vnc on the slot generation's Unix socket, started when the desktop
 * gets its first viewer rather than with the desktop. Most bot desktops are never watched, and
 * each x11vnc holds memory of its own plus SysV shared memory for its polling images
 * (docs/screens.md, the gateway section). Invariants:
 * - at most one x11vnc per socket: calls to `serve` while one starts share that start;
 * - once serving it stays until `stop`, so viewers that come and go pay one start; an x11vnc
 *   that died is started again by the next `serve`;
 * - a failed start leaves no process and no socket, and the next `serve` tries again;
 * - `stop` (the desktop's teardown) ends a start in flight too and leaves neither process nor
 *   socket; `serve` refuses after it.
 */
import type { ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, rmSync } from "node:fs";
import path from "node:path";
import { alive, stopProcess, waitFor } from "./process-group.ts";
import type { StackPlan } from "./stack-argv.ts";

/** Starts x11vnc for the plan (argv and logging are the launcher's). */
export type SpawnScreenServer = (plan: StackPlan) => ChildProcess;

/** How long x11vnc may take to open its socket: ~0.1–0.3 s here, far longer on a loaded host. */
const READY_MS = 10_000;
/** x11vnc exits at once on SIGTERM, closing every viewer's connection. */
const STOP_GRACE_MS = 2_000;

export class ScreenServer {
  readonly #plan: StackPlan;
  readonly #spawn: SpawnScreenServer;
  #child: ChildProcess | undefined;
  #starting: Promise<void> | undefined;
  #stopped = false;

  constructor(plan: StackPlan, spawn: SpawnScreenServer) {
    this.#plan = plan;
    this.#spawn = spawn;
  }

  /** Whether x11vnc runs and its socket is there. */
  get serving(): boolean {
    return this.#child !== undefined && alive(this.#child) && existsSync(this.#plan.vncSocket);
  }

  /** Resolves once x11vnc accepts viewers on `plan.vncSocket`, starting it if it does not. */
  serve(): Promise<void> {
    if (this.#stopped) return Promise.reject(new Error("the desktop is stopping"));
    if (this.#starting) return this.#starting;
    if (this.serving) return Promise.resolve();
    const starting = this.#start().finally(() => {
      if (this.#starting === starting) this.#starting = undefined;
    });
    this.#starting = starting;
    return starting;
  }

  /** Stops x11vnc (closing its viewers) and removes its socket; throws when x11vnc survived. */
  async stop(): Promise<void> {
    this.#stopped = true;
    // A start in flight sees `#stopped`, kills what it spawned and removes the socket itself.
    await this.#starting?.catch(() => undefined);
    try {
      await stopProcess(this.#child, STOP_GRACE_MS, "group");
    } finally {
      rmSync(this.#plan.vncSocket, { force: true });
    }
  }

  async #start(): Promise<void> {
    const socket = this.#plan.vncSocket;
    // One that died (crash, kill) is reaped with its group first; its socket may be left.
    await stopProcess(this.#child, 0, "group");
    rmSync(socket, { force: true });
    mkdirSync(path.dirname(socket), { recursive: true });
    if (this.#stopped) throw new Error("the desktop is stopping");
    const child = this.#spawn(this.#plan);
    this.#child = child;
    try {
      await waitFor(`x11vnc on ${socket}`, () => this.#stopped || existsSync(socket), READY_MS, child);
      if (this.#stopped) throw new Error("the desktop stopped while its screen server was starting");
    } catch (error) {
      try {
        await stopProcess(child, STOP_GRACE_MS, "group");
        if (this.#child === child) this.#child = undefined;
      } finally {
        rmSync(socket, { force: true });
      }
      throw error;
    }
  }
}
