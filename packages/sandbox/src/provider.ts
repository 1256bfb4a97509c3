/**
 * The one interface every computer backend implements (PRV-1).
 *
 * A provider owns machines; a `Sandbox` is a cheap handle on one machine, addressed by the
 * provider's opaque `ref` (PRV-3: the ref is an acceleration path, never durable data — a
 * missing machine is replaced by `provision`, and its workspace restored by the caller through
 * `importWorkspace`).
 *
 * Paths handed to file methods are workspace-relative POSIX paths ("notes/a.txt"); absolute
 * paths and `..` segments are refused with `INVALID_PATH` by every implementation.
 */
import type { Readable } from "node:stream";
import type { ProviderKind } from "@rakazo/config";
import type {
  PageAction,
  PageActResult,
  PageNavigation,
  PageSnapshot,
  ScreenGatewayTarget,
} from "@rakazo/protocol";
import type { SandboxDesktop, SlotRef } from "./provider-desktop.ts";

/**
 * The kinds are the keys of @rakazo/config's provider table (`PROVIDERS`), written once there;
 * the registry (./registry.ts) fails to type-check until each kind has a factory.
 */
export type { ProviderKind } from "@rakazo/config";
// The wire shapes are @rakazo/protocol's (written once); re-exported where providers use them.
export {
  DESKTOP_SCREEN,
  type DesktopAction,
  type MouseButton,
  PAGE_MAX_ELEMENTS,
  PAGE_MAX_TEXT_CHARS,
  type PageActErrorCode,
  type PageAction,
  type PageActResult,
  type PageElement,
  type PageNavigation,
  type PageSnapshot,
  type Point,
  type ScreenGatewayTarget,
} from "@rakazo/protocol";

// The desktop port (observe, act, release, closeBrowser, …) has a file of its own.
export * from "./provider-desktop.ts";

export type ComputerMode = "team" | "private";

export interface ProviderCapabilities {
  /** Per-bot graphical desktops (observe/act). */
  readonly desktop: boolean;
  /** The optional page-level browser contract (BRW-1). */
  readonly pageBrowser: boolean;
  /** The optional browser terminal (TRM-7). */
  readonly terminal: boolean;
  /**
   * Whether a running machine costs money by the minute (cloud sandboxes). Decides how long a
   * computer waiting for a human stays awake (TKO-3).
   */
  readonly billsWhileRunning: boolean;
  /**
   * Network policies this adapter can enforce; absent means `["none"]` only. The
   * control plane refuses any other policy with `UNSUPPORTED` instead of ignoring it.
   */
  readonly networkModes?: readonly NetworkMode[];
  /**
   * Whether the machine bind-mounts `DATA_DIR/homes/<home key>` as its live workspace (PRV-5):
   * a checkpoint then reads the local home in place and a restore only prepares it before the
   * machine starts; otherwise workspaces travel as tar streams.
   */
  readonly mountsHome: boolean;
  /** Who must own a mounted home (the machine's unprivileged user); absent: the host's user. */
  readonly homeOwner?: { readonly uid: number; readonly gid: number };
  /**
   * Which page browser serves this provider's computers when `BROWSER_PROVIDER` is unset
   * (BRW-7): `sandbox` is the machine's own (`Sandbox.pageBrowser`), `fake` the in-process
   * page emulator for machines without a real browser.
   */
  readonly defaultPageBrowser: "sandbox" | "fake";
}

// ---------------------------------------------------------------- network policy

/**
 * `none`: no network at all (the default). `egress`: outbound to public addresses.
 * `allowlist`: outbound only to the listed hosts and ports. Under every mode a computer never
 * reaches the host, its services, other computers, link-local or metadata addresses, and
 * private ranges only where the deployment opened them (docs/security.md, "Network").
 */
export const NETWORK_MODES = ["none", "egress", "allowlist"] as const;
export type NetworkMode = (typeof NETWORK_MODES)[number];

export interface NetworkAllowEntry {
  /** `example.com`, `*.example.com` (subdomains) or an IP literal. */
  readonly host: string;
  /** Absent: 80 and 443. */
  readonly ports?: readonly number[];
}

export interface NetworkPolicy {
  readonly mode: NetworkMode;
  /** Only under `allowlist`. */
  readonly allow?: readonly NetworkAllowEntry[];
}

export const NO_NETWORK: NetworkPolicy = { mode: "none" };

export interface ProvisionRequest {
  /** Rakazo's id of the computer; providers label machines with it to find them again. */
  readonly computerId: string;
  readonly mode: ComputerMode;
  /** The ref stored from an earlier provision of the same provider kind, if any. */
  readonly ref?: string | null;
  /** Key of the workspace this machine mounts or restores (stable across replacements). */
  readonly homeKey: string;
  /** The computer's size; absent fields take the provider's deployment defaults. */
  readonly sizing?: ComputerSizing;
  /** The computer's network policy; absent = `none`. A machine with another policy is replaced. */
  readonly network?: NetworkPolicy;
}

/**
 * Resources of one computer. Docker maps them 1:1 onto the container's cgroup; remote
 * providers map them onto their nearest instance size.
 */
export interface ComputerSizing {
  readonly memoryBytes?: number;
  /** CPUs in billionths, as Docker's NanoCpus (1.5 CPUs = 1_500_000_000). */
  readonly nanoCpus?: number;
  readonly pidsLimit?: number;
  /** The size of the computer's home (Docker: its own filesystem of this size, home-disk.ts). */
  readonly diskBytes?: number;
}

export interface ProvisionResult {
  readonly ref: string;
  /**
   * True when the machine behind `request.ref` was gone (or there was none) and a new one was
   * made: the caller must import the latest stored workspace before use (PER-2, PRV-3).
   */
  readonly replaced: boolean;
}

export type SandboxStatus = "running" | "stopped" | "missing";

/**
 * One event of a provider's own (`event` names it, e.g. `docker.socket.refused`): ids and
 * reasons, never paths or secrets. The runtime writes each as a log line.
 */
export type ProviderEventLog = (event: { readonly event: string } & Record<string, unknown>) => void;

export interface StopOptions {
  /**
   * The caller has closed every browser on the machine cleanly (profiles on disk, PER-7) and
   * saved its workspace: nothing still running there needs a shutdown grace, so an adapter may
   * end it at once rather than wait for it to exit (Docker: no stop timeout).
   */
  readonly quiesced?: boolean;
}

export interface SandboxProvider {
  readonly kind: ProviderKind;
  readonly capabilities: ProviderCapabilities;
  /** Reconnects to (and starts) the machine behind `ref`, or creates a replacement. */
  provision(request: ProvisionRequest): Promise<ProvisionResult>;
  /** Stops processes, keeps the machine and its workspace. `SANDBOX_GONE` if missing. */
  stop(ref: string, options?: StopOptions): Promise<void>;
  /** Removes the machine. Idempotent: destroying a missing machine succeeds. */
  destroy(ref: string): Promise<void>;
  status(ref: string): Promise<SandboxStatus>;
  /** A handle on one machine; does no I/O. Calls on a missing machine fail with `SANDBOX_GONE`. */
  sandbox(ref: string): Sandbox;
  /** Present where the provider keeps each home on a filesystem of its own (Docker, home-disk.ts). */
  readonly homeDisks?: ProviderHomeDisks;
}

/**
 * A home's own disk, which lives as long as the home (not its machine): the home store calls
 * `detach` before it swaps the home's folder and `remove` before it deletes the home.
 */
export interface ProviderHomeDisks {
  /** Used and total bytes of the home's disk; null when it has none on this host. */
  usage(homeKey: string): Promise<HomeDiskUsage | null>;
  /** Unmounts the disk; the next provision moves what the folder then holds onto a new one. */
  detach(homeKey: string): Promise<void>;
  /** Unmounts and deletes the disk, files and all (PER-5). */
  remove(homeKey: string): Promise<void>;
}

export interface HomeDiskUsage {
  readonly usedBytes: number;
  readonly sizeBytes: number;
}

export interface Sandbox {
  readonly ref: string;
  exec(request: ExecRequest): Promise<ExecResult>;
  readonly files: SandboxFiles;
  /** Present when `capabilities.desktop`. */
  readonly desktop?: SandboxDesktop;
  /** Present when `capabilities.pageBrowser` (BRW-1). */
  readonly pageBrowser?: PageBrowser;
  /** Present when `capabilities.terminal` (TRM-7). */
  connectTerminal?(request: TerminalRequest): Promise<TerminalInfo>;
  /** Stops the PTY server's shells for a bot (all bots when omitted) and removes their files (TRM-6). */
  stopTerminal?(request: { readonly botId?: string }): Promise<{ readonly closed: number }>;
  /** The computer's screen gateway (SCR-1..3), where the provider wires one. */
  readonly screens?: SandboxScreens;
  /** Background commands, where the computer runs the supervisor's process manager. */
  readonly processes?: SandboxProcesses;
}

// ---------------------------------------------------------------- background commands

export interface ProcessOutputChunk {
  readonly stream: "stdout" | "stderr";
  /** Byte offset of the chunk's first byte in the process's output. */
  readonly offset: number;
  readonly data: string;
}

export interface ProcessRead {
  readonly chunks: readonly ProcessOutputChunk[];
  /** Read on from here. */
  readonly next: number;
  /** Bytes lost to the computer's bounded buffer between `since` and the oldest byte held. */
  readonly dropped: number;
  readonly running: boolean;
  readonly exitCode: number | null;
  readonly signal: string | null;
}

/**
 * `owner` scopes handles: a handle is found only with the owner that started it
 * (`PROCESS_NOT_FOUND` otherwise, like an unknown one). `PROCESS_LIMIT` past the cap.
 */
export interface SandboxProcesses {
  start(request: {
    readonly owner: string;
    readonly argv: readonly string[];
    /** Workspace-relative. */
    readonly cwd?: string;
    readonly env?: Readonly<Record<string, string>>;
  }): Promise<{ readonly handle: string; readonly pid: number }>;
  /** Output since the byte offset `since`, waiting up to `waitMs` for some (long poll). */
  read(request: {
    readonly owner: string;
    readonly handle: string;
    readonly since?: number;
    readonly waitMs?: number;
  }): Promise<ProcessRead>;
  /** Signals the process's whole group. */
  kill(request: {
    readonly owner: string;
    readonly handle: string;
    readonly signal?: "SIGTERM" | "SIGKILL" | "SIGINT" | "SIGHUP";
  }): Promise<{ readonly signalled: boolean; readonly running: boolean }>;
}

// ---------------------------------------------------------------- screens (SCR-1..4)

export interface ScreenRevocationRule {
  readonly id?: string;
  readonly botId?: string;
  readonly policy?: "view" | "control" | "terminal";
  readonly subject?: string;
  readonly issuedAtOrBefore?: number;
  /** When the rule may be forgotten (the longest capability lifetime from now). */
  readonly expiresAt: number;
}

export interface SandboxScreens {
  /** Hands the gateway its computer id and derived keys (idempotent). */
  configure(config: { computerId: string; keys: readonly { kid: string; key: string }[] }): Promise<void>;
  /** Adds revocation rules; matching live connections close at once. */
  revoke(rules: readonly ScreenRevocationRule[]): Promise<{ closed: number }>;
  /** Whether the gateway would serve this ticket now, and why not. */
  check(ticket: string): Promise<{ ok: true } | { ok: false; reason: string }>;
  target(): Promise<ScreenGatewayTarget>;
}

// ---------------------------------------------------------------- execution

export interface ExecRequest {
  readonly argv: readonly string[];
  /** Workspace-relative working directory; the workspace root when omitted. */
  readonly cwd?: string;
  readonly env?: Readonly<Record<string, string>>;
  /** Killed after this long; the result then has `timedOut: true` and exit code 124. */
  readonly timeoutMs?: number;
  readonly stdin?: string | Uint8Array;
  /** Streamed output, in order, as it arrives. */
  readonly onOutput?: (chunk: OutputChunk) => void;
}

export interface OutputChunk {
  readonly stream: "stdout" | "stderr";
  readonly data: string;
}

export interface ExecResult {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
  readonly timedOut: boolean;
}

// ---------------------------------------------------------------- files

export interface FileEntry {
  /** Workspace-relative path. */
  readonly path: string;
  readonly name: string;
  readonly type: "file" | "directory" | "symlink" | "other";
  readonly size: number;
  readonly modifiedAt: Date;
}

export interface SandboxFiles {
  /** Direct children of a directory, sorted by name. `FILE_NOT_FOUND` if it does not exist. */
  list(path: string): Promise<FileEntry[]>;
  /** `FILE_NOT_FOUND`; `FILE_TOO_LARGE` when the file exceeds `maxBytes`. */
  read(path: string, options?: { maxBytes?: number }): Promise<Uint8Array>;
  /** Creates parent directories; replaces the file atomically where the backend allows it. */
  write(path: string, data: Uint8Array | string): Promise<void>;
  /** The whole workspace as a tar stream of directories and regular files, paths relative. */
  exportWorkspace(): Promise<Readable>;
  /** Replaces the workspace contents with the tar stream's (see PER-6 for what is accepted). */
  importWorkspace(tar: Readable): Promise<void>;
}

// ---------------------------------------------------------------- optional contracts

/**
 * Page-level browser tools (BRW-1..5): the bot's visible Chromium tab, read as text and driven
 * by element refs instead of pixels.
 *
 * What must stay true in every implementation:
 * - A snapshot holds at most `PAGE_MAX_ELEMENTS` interactive elements and at most
 *   `PAGE_MAX_TEXT_CHARS` of page text (BRW-4); password values never appear in it (BRW-3).
 * - A ref names one element of one document. A ref taken before a navigation, or whose element
 *   was removed or replaced, fails with `STALE_REF`; it is never retargeted to a look-alike.
 * - `act` runs its actions in order and stops at the first failure. It reports how many
 *   completed and whether the failed one may have taken effect (`uncertain`); it never retries
 *   or replays anything itself (BRW-5).
 */
export interface PageBrowser {
  navigate(botId: string, url: string): Promise<PageNavigation>;
  snapshot(botId: string): Promise<PageSnapshot>;
  act(botId: string, actions: readonly PageAction[]): Promise<PageActResult>;
}

/** TRM-4: start (or join) the PTY server for one bot's screen slot generation. */
export interface TerminalRequest {
  readonly botId: string;
  readonly slot: SlotRef;
  /** Where its shells start: the bot's folder, workspace-relative (CMP-1). */
  readonly cwd: string;
}

/**
 * The PTY server is reached through the computer's screen gateway (`screens.target()`) with a
 * `terminal` ticket; this only says it serves.
 */
export interface TerminalInfo {
  /** Shells open on the server now. */
  readonly sessions: number;
}
