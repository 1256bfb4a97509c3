/**
 * Pure builders for one desktop stack: Xvfb + Chromium, and x11vnc on a Unix socket.
 * Everything here is data; `desktop-stack.ts` spawns it.
 */
import path from "node:path";

const SCREEN_WIDTH = 1280;
const SCREEN_HEIGHT = 800;

export interface StackPlan {
  readonly index: number;
  readonly generation: number;
  readonly display: number;
  readonly debugPort: number;
  readonly profileDir: string;
  readonly vncSocket: string;
  /** Files a killed stack may leave behind; removed before start and after teardown. */
  readonly staleFiles: readonly string[];
}

export interface StackLayout {
  readonly runDir: string;
  /** Display of slot 0; slot N uses displayBase + N. */
  readonly displayBase: number;
  /** DevTools port of slot 0; slot N uses debugPortBase + N. */
  readonly debugPortBase: number;
}

export const DEFAULT_LAYOUT = { displayBase: 10, debugPortBase: 9300 } as const;

/**
 * The RFB socket is unique to slot AND generation (SCR-2): a viewer holding the old path can never
 * reach the slot's next bot, because that bot's x11vnc listens somewhere else.
 */
export function vncSocketPath(runDir: string, index: number, generation: number): string {
  return path.join(runDir, "vnc", `slot${index}-g${generation}.sock`);
}

export function planStack(
  layout: StackLayout,
  slot: { index: number; generation: number },
  profileDir: string,
): StackPlan {
  const display = layout.displayBase + slot.index;
  return {
    index: slot.index,
    generation: slot.generation,
    display,
    debugPort: layout.debugPortBase + slot.index,
    profileDir,
    vncSocket: vncSocketPath(layout.runDir, slot.index, slot.generation),
    staleFiles: [
      `/tmp/.X${display}-lock`,
      `/tmp/.X11-unix/X${display}`,
      ...PROFILE_SINGLETON_FILES.map((name) => path.join(profileDir, name)),
    ],
  };
}

/** Chromium's per-profile lock files; a killed browser leaves them and blocks the next start. */
export const PROFILE_SINGLETON_FILES = ["SingletonLock", "SingletonSocket", "SingletonCookie"] as const;

/**
 * No GLX: nothing on the desktop renders through OpenGL (Chromium runs with `--disable-gpu`,
 * screenshots and x11vnc read the framebuffer), and the extension loads Mesa's software renderer
 * into every Xvfb, ~11 MiB private each (docs/decisions.md, "Lighter desktops").
 */
export function xvfbArgv(plan: StackPlan): string[] {
  return [
    "Xvfb",
    `:${plan.display}`,
    "-screen",
    "0",
    `${SCREEN_WIDTH}x${SCREEN_HEIGHT}x24`,
    "-nolisten",
    "tcp",
    "-extension",
    "GLX",
  ];
}

/**
 * Chromium's process model for a desktop, chosen by measurement (docs/decisions.md, "Lighter
 * desktops"): the network service and the audio service run inside the browser process instead
 * of a process each, and no spare renderer is kept warm. (`--in-process-gpu` saved more but
 * broke the stack's window readiness and the caret-free frame hash.) Site isolation stays on:
 * a bot visits any site. Chromium reads only the LAST
 * `--enable-features` / `--disable-features`, so every feature switch of the desktop belongs
 * in these two lists and nowhere else (stack-argv.test.ts holds it to one of each).
 */
const ENABLE_FEATURES = ["NetworkServiceInProcess2"] as const;
const DISABLE_FEATURES = ["AudioServiceOutOfProcess", "SpareRendererForSitePerProcess"] as const;
const PROCESS_MODEL_FLAGS = [
  `--enable-features=${ENABLE_FEATURES.join(",")}`,
  `--disable-features=${DISABLE_FEATURES.join(",")}`,
] as const;

/**
 * `freshProfile`: a new profile opens about:blank; an existing one restores its last session
 * instead (CMP-6), so no URL is passed. `proxyServer` (egress/allowlist): every request
 * but loopback goes to the in-computer relay to the egress proxy, and names are resolved there,
 * never by Chromium; `none` passes none, and the computer has no network to use.
 */
export function chromiumArgv(
  plan: StackPlan,
  options: { freshProfile: boolean; binary?: string; proxyServer?: string },
): string[] {
  return [
    options.binary ?? "chromium",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--test-type",
    "--hide-crash-restore-bubble",
    "--restore-last-session",
    "--password-store=basic",
    ...PROCESS_MODEL_FLAGS,
    `--window-position=0,0`,
    `--window-size=${SCREEN_WIDTH},${SCREEN_HEIGHT}`,
    `--user-data-dir=${plan.profileDir}`,
    // BRW-2: the debugging port is bound to loopback only and never published.
    "--remote-debugging-address=127.0.0.1",
    `--remote-debugging-port=${plan.debugPort}`,
    // Chromium itself keeps loopback direct: a bot's own dev server is not egress.
    ...(options.proxyServer ? [`--proxy-server=${options.proxyServer}`] : []),
    ...(options.freshProfile ? ["about:blank"] : []),
  ];
}

/** x11vnc for the desktop's viewers; started on the first one (screen-server.ts). */
export function x11vncArgv(plan: StackPlan, binary = "x11vnc"): string[] {
  return [
    binary,
    "-display",
    `:${plan.display}`,
    "-unixsock",
    plan.vncSocket,
    // No TCP listener at all: the only way in is the Unix socket (SCR-1).
    "-rfbport",
    "0",
    "-forever",
    "-shared",
    "-nopw",
    "-quiet",
  ];
}
