/**
 * Spawns and stops one desktop stack (Xvfb + Chromium, and x11vnc once the desktop has a viewer)
 * from a `StackPlan`. Thin on purpose: what to run is decided in `stack-argv.ts`, when in
 * `desktop-slots.ts`; x11vnc's lifecycle is `screen-server.ts`.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import type { ActionStep } from "./actions.ts";
import { encodePng, frameHash } from "./png.ts";
import { alive, pidAlive, sleep, spawnLeader, stopProcess, waitFor } from "./process-group.ts";
import { ScreenServer } from "./screen-server.ts";
import { chromiumArgv, PROFILE_SINGLETON_FILES, type StackPlan, x11vncArgv, xvfbArgv } from "./stack-argv.ts";
import { captureDisplay } from "./x11-capture.ts";

interface Frame {
  readonly png: Buffer;
  readonly width: number;
  readonly height: number;
  readonly frameHash: string;
}

/** One running desktop. `teardown` is idempotent and throws when something survived it. */
export interface DesktopStack {
  readonly plan: StackPlan;
  capture(): Promise<Frame>;
  runStep(step: ActionStep): Promise<void>;
  /**
   * Starts the desktop's RFB server (x11vnc on `plan.vncSocket`) unless it serves already; a
   * desktop starts without one and gets it on its first viewer. Concurrent calls share one
   * start; rejects when x11vnc does not start or the stack is being torn down.
   */
  serveScreen(): Promise<void>;
  /**
   * Starts the stack's Chromium again if it died (crash, kill), on the same display and
   * profile, so it restores its last session (CMP-6). True when it had to. Optional: test
   * stacks without a browser leave it out.
   */
  reviveBrowser?(): Promise<boolean>;
  /**
   * Closes the stack's Chromium cleanly (its profile flushed to disk, PER-7) and leaves the
   * display and x11vnc (when started), so every viewer stays connected; the next use revives it
   * (`reviveBrowser`). True when a browser was running. Optional like `reviveBrowser`.
   */
  closeBrowser?(): Promise<boolean>;
  teardown(): Promise<void>;
}

/** A failed start; `leftover` is set when cleaning up what was started failed too. */
export class StackStartError extends Error {
  override readonly name = "StackStartError";
  readonly leftover: DesktopStack | undefined;
  constructor(message: string, leftover: DesktopStack | undefined) {
    super(message);
    this.leftover = leftover;
  }
}

export interface StackLauncher {
  /** Starts the stack; on failure it tears down what it started and rethrows. */
  start(plan: StackPlan): Promise<DesktopStack>;
}

export interface ProcessLauncherOptions {
  readonly chromiumBinary?: string;
  /** x11vnc's binary (tests: a stand-in that starts slowly or fails). */
  readonly x11vncBinary?: string;
  /** Where process output goes; ignored when unset. */
  readonly logDir?: string;
  readonly chromiumStopTimeoutMs?: number;
  /** Chromium's `--proxy-server` under egress/allowlist. */
  readonly browserProxy?: string;
  /**
   * Chromium's `XDG_CONFIG_HOME`, holding GTK settings with the text caret's blinking off: a
   * blinking caret changes the screen twice a second, so an unchanged page never hashed the
   * same twice (TOOL-2's frame hash). Unset: Chromium's own defaults.
   */
  readonly chromiumConfigDir?: string;
}

/** GTK settings for Chromium (GTK 3 and 4 read their own folder): no blinking text caret. */
function writeChromiumConfig(dir: string): void {
  for (const gtk of ["gtk-3.0", "gtk-4.0"]) {
    mkdirSync(path.join(dir, gtk), { recursive: true });
    writeFileSync(path.join(dir, gtk, "settings.ini"), "[Settings]\ngtk-cursor-blink=false\n");
  }
}

/**
 * How long a Chromium start may take before the desktop is refused (DESKTOP_UNAVAILABLE). A cold
 * start takes 1–3 s on an idle computer, but a computer sharing two busy cores with its
 * neighbours was seen past 30 s; a minute still refuses a start that hangs, within the 120 s
 * the host gives one supervisor call.
 */
const CHROMIUM_READY_MS = 60_000;

function devtoolsReady(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const request = http.get({ host: "127.0.0.1", port, path: "/json/version", timeout: 500 }, (response) => {
      response.resume();
      resolve(response.statusCode === 200);
    });
    request.on("error", () => resolve(false));
    request.on("timeout", () => {
      request.destroy();
      resolve(false);
    });
  });
}

/**
 * Chromium's window is mapped on the display. DevTools answers before it is (0.6 s on an idle
 * host, seconds on a loaded one), and keys xdotool sends in between go nowhere: a desktop whose
 * `observe` has answered must take the next `act` (an agent's ctrl+l and URL were lost).
 */
function windowShown(env: NodeJS.ProcessEnv): Promise<boolean> {
  return new Promise((resolve) => {
    execFile(
      "xdotool",
      ["search", "--onlyvisible", "--class", "chromium"],
      { env, timeout: 5_000 },
      (error, stdout) => resolve(!error && stdout.trim() !== ""),
    );
  });
}

/** Ready for input: DevTools answers and the window is shown. */
async function chromiumReady(port: number, env: NodeJS.ProcessEnv): Promise<boolean> {
  return (await devtoolsReady(port)) && (await windowShown(env));
}

/** Asks Chromium to close itself over its loopback DevTools endpoint (BRW-2). */
async function requestBrowserClose(port: number): Promise<void> {
  const response = await fetch(`http://127.0.0.1:${port}/json/version`, {
    signal: AbortSignal.timeout(2000),
  });
  const { webSocketDebuggerUrl } = (await response.json()) as { webSocketDebuggerUrl: string };
  await new Promise<void>((resolve, reject) => {
    const socket = new WebSocket(webSocketDebuggerUrl);
    const timer = setTimeout(() => {
      socket.close();
      reject(new Error("Browser.close timed out"));
    }, 3000);
    const done = (): void => {
      clearTimeout(timer);
      resolve();
    };
    socket.onopen = () => socket.send(JSON.stringify({ id: 1, method: "Browser.close" }));
    socket.onmessage = done;
    socket.onclose = done;
    socket.onerror = () => undefined;
  });
}

/** Removes files a killed stack leaves behind. A lock held by a live process is not stale. */
function removeStaleFiles(plan: StackPlan): void {
  const lock = `/tmp/.X${plan.display}-lock`;
  if (existsSync(lock)) {
    const pid = Number.parseInt(readFileSync(lock, "utf8").trim(), 10);
    if (Number.isInteger(pid) && pid > 0 && pidAlive(pid)) {
      throw new Error(`display :${plan.display} is held by live process ${pid}`);
    }
  }
  for (const file of plan.staleFiles) rmSync(file, { force: true });
}

export function processLauncher(options: ProcessLauncherOptions = {}): StackLauncher {
  const launch = (argv: readonly string[], env: NodeJS.ProcessEnv, name: string): ChildProcess =>
    spawnLeader(argv, env, { dir: options.logDir, name });

  return {
    async start(plan) {
      const display = { ...process.env, DISPLAY: `:${plan.display}` };
      const children: { xvfb?: ChildProcess; chromium?: ChildProcess } = {};
      const screen = new ScreenServer(plan, () =>
        launch(x11vncArgv(plan, options.x11vncBinary), process.env, `x11vnc-${plan.display}.log`),
      );
      const chromiumEnv = options.chromiumConfigDir
        ? { ...display, XDG_CONFIG_HOME: options.chromiumConfigDir }
        : display;
      const launchChromium = (freshProfile: boolean): ChildProcess => {
        if (options.chromiumConfigDir) writeChromiumConfig(options.chromiumConfigDir);
        return launch(
          chromiumArgv(plan, {
            freshProfile,
            ...(options.chromiumBinary ? { binary: options.chromiumBinary } : {}),
            ...(options.browserProxy ? { proxyServer: options.browserProxy } : {}),
          }),
          chromiumEnv,
          `chromium-${plan.display}.log`,
        );
      };
      /**
       * Browser.close is Chromium's full clean shutdown (cookies and session flushed to the
       * profile); a bare SIGTERM exits without flushing recent cookies. SIGTERM to the leader
       * follows, then SIGKILL to whatever is left of its group.
       */
      const stopChromium = async (): Promise<void> => {
        const current = children.chromium;
        if (current && alive(current)) {
          await requestBrowserClose(plan.debugPort).catch(() => undefined);
          const deadline = Date.now() + (options.chromiumStopTimeoutMs ?? 8000);
          while (alive(current) && Date.now() < deadline) await sleep(25);
        }
        await stopProcess(current, 2000, "leader");
      };
      const stack: DesktopStack = {
        plan,
        async capture() {
          const raw = await captureDisplay(plan.display);
          return {
            png: await encodePng(raw),
            width: raw.width,
            height: raw.height,
            frameHash: frameHash(raw),
          };
        },
        async runStep(step) {
          if (step.kind === "wait") return sleep(step.ms);
          await runXdotool(step.args, display);
        },
        serveScreen: () => screen.serve(),
        async reviveBrowser() {
          const current = children.chromium;
          if (!current || alive(current)) return false;
          // Renderers of the dead browser may linger in its group; they hold the profile.
          await stopProcess(current, 0, "group");
          for (const name of PROFILE_SINGLETON_FILES)
            rmSync(path.join(plan.profileDir, name), { force: true });
          children.chromium = launchChromium(false);
          await waitFor(
            `Chromium on :${plan.display}`,
            () => chromiumReady(plan.debugPort, display),
            CHROMIUM_READY_MS,
            children.chromium,
          );
          return true;
        },
        async closeBrowser() {
          const current = children.chromium;
          if (!current || !alive(current)) return false;
          // Only the browser: x11vnc keeps serving the display, so viewers stay (CMP-6).
          await stopChromium();
          return true;
        },
        async teardown() {
          // SCR-3 order: viewers first (x11vnc's exit, or the end of its start, closes every RFB
          // connection), then the browser (SIGTERM lets it save its session, CMP-6), then the
          // display; then the files.
          const errors: string[] = [];
          await screen.stop().catch((e: Error) => errors.push(`x11vnc: ${e.message}`));
          await stopChromium().catch((e: Error) => errors.push(`chromium: ${e.message}`));
          await stopProcess(children.xvfb, 3000, "group").catch((e: Error) =>
            errors.push(`Xvfb: ${e.message}`),
          );
          if (errors.length === 0) {
            for (const file of plan.staleFiles) rmSync(file, { force: true });
          }
          if (existsSync(plan.vncSocket)) errors.push(`${plan.vncSocket} still exists`);
          if (errors.length > 0)
            throw new Error(`teardown of slot ${plan.index} failed: ${errors.join("; ")}`);
        },
      };
      try {
        removeStaleFiles(plan);
        const freshProfile = !existsSync(plan.profileDir);
        mkdirSync(plan.profileDir, { recursive: true });
        rmSync(plan.vncSocket, { force: true });
        if (await devtoolsReady(plan.debugPort))
          throw new Error(`debug port ${plan.debugPort} is already in use`);

        children.xvfb = launch(xvfbArgv(plan), process.env, `xvfb-${plan.display}.log`);
        await waitFor(
          `Xvfb :${plan.display}`,
          () => existsSync(`/tmp/.X11-unix/X${plan.display}`),
          10_000,
          children.xvfb,
        );

        children.chromium = launchChromium(freshProfile);
        await waitFor(
          `Chromium on :${plan.display}`,
          () => chromiumReady(plan.debugPort, display),
          CHROMIUM_READY_MS,
          children.chromium,
        );
        // No x11vnc yet: it starts on the desktop's first viewer (serveScreen).
        return stack;
      } catch (error) {
        const leftover = await stack.teardown().then(
          () => undefined,
          () => stack,
        );
        throw new StackStartError((error as Error).message, leftover);
      }
    },
  };
}

function runXdotool(args: readonly string[], env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn("xdotool", args, { env, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`xdotool ${args[0]} failed (${code ?? signal}): ${stderr.trim().slice(0, 300)}`));
    });
  });
}
