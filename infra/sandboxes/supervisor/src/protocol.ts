/**
 * The supervisor's wire protocol: HTTP/1.1 over a Unix socket, `POST /rpc/<method>` with a JSON
 * body; every answer is a `SupervisorAnswer`. The command path (`cli.ts <method> '<json>'`) prints
 * the same answer on stdout. Types only — this file is shared with host-side clients.
 */

export const SUPERVISOR_METHODS = [
  "health",
  "desktop.observe",
  "desktop.act",
  "desktop.release",
  "desktop.list",
  "desktop.setControlled",
  "screens.configure",
  "screens.revoke",
  "screens.check",
  "screens.connections",
  "page.navigate",
  "page.snapshot",
  "page.act",
] as const;
export type SupervisorMethod = (typeof SUPERVISOR_METHODS)[number];

/** Error codes are a subset of `@rakazo/sandbox`'s `SandboxErrorCode`, so clients map them 1:1. */
export type SupervisorErrorCode =
  | "MULTI_SCREEN_UNAVAILABLE"
  | "DESKTOP_UNAVAILABLE"
  | "INVALID_ACTION"
  | "PAGE_TIMEOUT"
  | "SANDBOX_PROVIDER_ERROR";

export type SupervisorAnswer<T = unknown> =
  | { readonly ok: true; readonly result: T }
  | {
      readonly ok: false;
      readonly error: {
        readonly code: string;
        readonly message: string;
        /** e.g. `{ reason: "memory" | "pids" | "cpu" | "limit", active, limit }` for MULTI_SCREEN_UNAVAILABLE. */
        readonly details?: Record<string, unknown>;
      };
    };

export interface WireSlotRef {
  readonly index: number;
  readonly generation: number;
}

export interface ObserveResult {
  readonly pngBase64: string;
  readonly width: number;
  readonly height: number;
  readonly frameHash: string;
  readonly slot: WireSlotRef;
}

export interface ActResultWire {
  readonly completed: number;
  readonly total: number;
  readonly error?: { readonly code: string; readonly message: string; readonly index: number };
}

export type SlotState = "free" | "starting" | "running" | "stopping" | "teardown_failed";

export interface SlotInfoWire {
  readonly botId: string;
  readonly slot: WireSlotRef;
  readonly display: number;
  readonly state: SlotState;
  /** ISO timestamps. */
  readonly startedAt: string;
  readonly lastUsedAt: string;
  readonly controlled: boolean;
  /** The slot+generation-unique RFB socket the screen gateway connects to (SCR-2). */
  readonly vncSocket: string;
  /** Chromium's DevTools port, bound to the computer's loopback only (BRW-2). */
  readonly debugPort: number;
}

export interface HealthResult {
  readonly ok: true;
  readonly pid: number;
  /** Slots holding resources (starting, running, stopping, teardown_failed). */
  readonly active: number;
  /** SANDBOX_TEAM_SCREEN_LIMIT; 0 = no explicit cap. */
  readonly limit: number;
  /** Desktops running now. */
  readonly live: number;
  /** The computer's cgroup: what bounds new desktops (null = unbounded or unreadable). */
  readonly memory: { readonly usedBytes: number | null; readonly maxBytes: number | null };
  readonly pids: { readonly current: number | null; readonly max: number | null };
  readonly cpuPressure: number | null;
  /** What admission charges per new desktop. */
  readonly desktopEstimate: { readonly memoryBytes: number; readonly pids: number };
}
