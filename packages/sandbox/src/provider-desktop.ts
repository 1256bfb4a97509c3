/**
 * The desktop port of a `Sandbox` (./provider.ts): a bot's screen observed and acted on, its
 * browser closed or its whole desktop released, and what bounds more desktops (CMP-4, CMP-5).
 */
import type { DesktopAction } from "@rakazo/protocol";

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
  /**
   * Closes the bot's browser cleanly (its profile complete on disk, PER-7) and keeps the rest of
   * its desktop: the display, the screen server and every connected viewer stay (CMP-6). The
   * next `observe`/`act` relaunches the browser with its last session. No-op without a desktop.
   */
  closeBrowser(botId: string): Promise<void>;
  list(): Promise<DesktopSlotInfo[]>;
  /** Marks the bot's screen as controlled by a person: never evicted at the cap (CMP-5). */
  setControlled?(botId: string, controlled: boolean): Promise<void>;
  /** Live desktops and what bounds more of them; does not start a desktop. */
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
