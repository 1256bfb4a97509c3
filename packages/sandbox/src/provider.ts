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

/**
 * Kinds with an adapter in this build. A new adapter adds its kind here, and the registry
 * (./registry.ts) then fails to type-check until it is wired in.
 */
export const PROVIDER_KINDS = ["fake", "docker"] as const;
export type ProviderKind = (typeof PROVIDER_KINDS)[number];

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

export interface ProvisionRequest {
  /** Rakazo's id of the computer; providers label machines with it to find them again. */
  readonly computerId: string;
  readonly mode: ComputerMode;
  /** The ref stored from an earlier provision of the same provider kind, if any. */
  readonly ref?: string | null;
  /** Key of the workspace this machine mounts or restores (stable across replacements). */
  readonly homeKey: string;
  /** The computer's size (issue 12); absent fields take the provider's deployment defaults. */
  readonly sizing?: ComputerSizing;
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

export interface SandboxProvider {
  readonly kind: ProviderKind;
  readonly capabilities: ProviderCapabilities;
  /** Reconnects to (and starts) the machine behind `ref`, or creates a replacement. */
  provision(request: ProvisionRequest): Promise<ProvisionResult>;
  /** Stops processes, keeps the machine and its workspace. `SANDBOX_GONE` if missing. */
  stop(ref: string): Promise<void>;
  /** Removes the machine. Idempotent: destroying a missing machine succeeds. */
  destroy(ref: string): Promise<void>;
  status(ref: string): Promise<SandboxStatus>;
  /** A handle on one machine; does no I/O. Calls on a missing machine fail with `SANDBOX_GONE`. */
  sandbox(ref: string): Sandbox;
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
  connectTerminal?(request: TerminalRequest): Promise<TerminalTarget>;
  /** The computer's screen gateway (SCR-1..3), where the provider wires one. */
  readonly screens?: SandboxScreens;
}

// ---------------------------------------------------------------- screens (SCR-1..4)

/** Where the web service reaches a computer's gateway. Never shown to browsers (SCR-4). */
export type ScreenGatewayTarget =
  | { readonly transport: "unix"; readonly socketPath: string }
  | {
      readonly transport: "http";
      readonly url: string;
      /** Provider credentials for protected port hosting (PRV-4); sent by the proxy only. */
      readonly headers?: Readonly<Record<string, string>>;
    };

export interface ScreenRevocationRule {
  readonly id?: string;
  readonly botId?: string;
  readonly policy?: "view" | "control";
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

// ---------------------------------------------------------------- desktop

export type MouseButton = "left" | "right" | "middle";

export interface Point {
  readonly x: number;
  readonly y: number;
}

/** One step of an ordered, batched desktop action (TOOL-1). */
export type DesktopAction =
  | { readonly type: "move"; readonly x: number; readonly y: number }
  | {
      readonly type: "click";
      readonly x?: number;
      readonly y?: number;
      readonly button?: MouseButton;
      readonly double?: boolean;
    }
  | { readonly type: "drag"; readonly from: Point; readonly to: Point; readonly button?: MouseButton }
  | {
      readonly type: "scroll";
      readonly x?: number;
      readonly y?: number;
      readonly dx?: number;
      readonly dy: number;
    }
  | { readonly type: "type"; readonly text: string }
  /** xdotool-style key combo: "ctrl+l", "Return", "shift+Tab". */
  | { readonly type: "key"; readonly keys: string }
  | { readonly type: "wait"; readonly ms: number };

export interface Observation {
  /** PNG bytes of the bot's screen. */
  readonly png: Uint8Array;
  readonly width: number;
  readonly height: number;
  /** Stable hash of the pixels: equal frames have equal hashes (TOOL-2). */
  readonly frameHash: string;
  /** The slot and its generation that served this frame. */
  readonly slot: SlotRef;
}

export interface SlotRef {
  readonly index: number;
  readonly generation: number;
}

export interface ActResult {
  /** How many actions, from the start of the batch, completed. */
  readonly completed: number;
  readonly total: number;
  /** Set when an action failed; `completed` is then its index. */
  readonly error?: { readonly code: string; readonly message: string; readonly index: number };
}

export interface DesktopSlotInfo {
  readonly botId: string;
  readonly slot: SlotRef;
  readonly display: number;
  readonly startedAt: Date;
  readonly lastUsedAt: Date;
  readonly controlled: boolean;
}

export interface SandboxDesktop {
  /** Starts the bot's desktop on first use (CMP-4); `MULTI_SCREEN_UNAVAILABLE` past the cap (CMP-5). */
  observe(botId: string): Promise<Observation>;
  act(botId: string, actions: readonly DesktopAction[]): Promise<ActResult>;
  /**
   * Ends the bot's desktop: disconnects screen clients, stops its processes and frees the slot
   * (SCR-3). The bot's browser profile is kept (CMP-2).
   */
  release(botId: string): Promise<void>;
  list(): Promise<DesktopSlotInfo[]>;
  /** Marks the bot's screen as controlled by a person: never evicted at the cap (CMP-5). */
  setControlled?(botId: string, controlled: boolean): Promise<void>;
  /** Live desktops and what bounds more of them (issue 12); does not start a desktop. */
  capacity?(): Promise<DesktopCapacity>;
}

/** How full a computer is with desktops; null where the computer has no such bound. */
export interface DesktopCapacity {
  readonly live: number;
  /** SANDBOX_TEAM_SCREEN_LIMIT; 0 = none. */
  readonly limit: number;
  readonly memoryUsedBytes: number | null;
  readonly memoryMaxBytes: number | null;
  readonly pids: number | null;
  readonly pidsMax: number | null;
  /** What admission charges per new desktop. */
  readonly desktopMemoryBytes: number | null;
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

export const PAGE_MAX_ELEMENTS = 80;
export const PAGE_MAX_TEXT_CHARS = 8_000;

export interface PageNavigation {
  readonly url: string;
  readonly title: string;
  /** HTTP status of the main document, when the backend knows it. */
  readonly status?: number;
}

export interface PageElement {
  /** Opaque; valid only for the document it was taken from. */
  readonly ref: string;
  /** ARIA-ish role: link, button, textbox, checkbox, radio, combobox, … */
  readonly role: string;
  /** Accessible name (label, text, aria-label, placeholder). */
  readonly name: string;
  /** Current value of form fields; `"••••"` for password fields (BRW-3). */
  readonly value?: string;
  readonly checked?: boolean;
  readonly disabled?: boolean;
  readonly href?: string;
}

export interface PageSnapshot {
  readonly url: string;
  readonly title: string;
  /** Visible text, whitespace-collapsed, cut to `PAGE_MAX_TEXT_CHARS`. */
  readonly text: string;
  readonly textTruncated: boolean;
  /** In document order, at most `PAGE_MAX_ELEMENTS`. */
  readonly elements: readonly PageElement[];
  /** Interactive elements left out by the cap. */
  readonly omittedElements: number;
  /** Frames on the page; their content is not in the snapshot (use desktop tools, BRW-4). */
  readonly frames: number;
}

/** One step of an ordered page action batch. Keys are DOM key names: "Enter", "Tab", "Escape". */
export type PageAction =
  | { readonly type: "click"; readonly ref: string }
  /** Replaces the field's value with `text`. */
  | { readonly type: "fill"; readonly ref: string; readonly text: string }
  | { readonly type: "select"; readonly ref: string; readonly value: string }
  | { readonly type: "check"; readonly ref: string; readonly checked: boolean }
  | { readonly type: "press"; readonly key: string; readonly ref?: string }
  | { readonly type: "scroll"; readonly dy: number }
  | { readonly type: "wait"; readonly ms: number };

export type PageActErrorCode =
  /** The ref belongs to an earlier document or a removed element (never retargeted). */
  | "STALE_REF"
  /** No such ref was ever handed out for this document. */
  | "UNKNOWN_REF"
  /** The element cannot take this action (hidden, disabled, covered, wrong kind, in a frame). */
  | "NOT_ACTIONABLE"
  /** The action was sent but its effect did not settle in time (e.g. a navigation that hangs). */
  | "TIMEOUT"
  | "FAILED";

export interface PageActResult {
  /** How many actions, from the start of the batch, are confirmed done. */
  readonly completed: number;
  readonly total: number;
  /** The page after the batch (or after the failure). */
  readonly url: string;
  readonly title: string;
  /** Files the batch downloaded, saved under the workspace's `downloads/` folder. */
  readonly downloads: readonly { readonly path: string; readonly size: number }[];
  readonly error?: {
    readonly code: PageActErrorCode;
    readonly message: string;
    /** Index of the failed action; equals `completed`. */
    readonly index: number;
    /**
     * True when the failed action was (or may have been) delivered to the page, so its effect
     * is unknown: check with a snapshot before doing anything that could repeat it.
     */
    readonly uncertain: boolean;
  };
}

export interface TerminalRequest {
  readonly botId: string;
}

export interface TerminalTarget {
  /** Where the screen gateway (or its fake) listens for this terminal; never shown to browsers. */
  readonly url: string;
}
