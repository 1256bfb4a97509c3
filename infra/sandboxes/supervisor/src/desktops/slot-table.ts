/**
 * Slot allocation as pure decisions over a snapshot of the slot table (CMP-4, CMP-5, SCR-3).
 * No processes here; `desktop-slots.ts` applies the decisions.
 *
 * A slot is an index (display = base + index). Its generation counts occupants: it increments
 * every time the slot is handed to a bot, so (index, generation) names one desktop forever.
 */
import type { SlotState } from "../daemon/protocol.ts";

export interface SlotView {
  readonly index: number;
  /** Generation of the current or most recent occupant; 0 when never used. */
  readonly generation: number;
  readonly state: SlotState;
  readonly botId: string | null;
  readonly lastUsedAt: number;
  /** Someone holds control (a run's lease or a human takeover); never evicted. */
  readonly controlled: boolean;
  /** Calls in flight on this desktop; a busy desktop is not idle and is never evicted. */
  readonly busy: number;
}

export type AllocationPlan =
  | { readonly kind: "use"; readonly index: number; readonly generation: number }
  | { readonly kind: "evict"; readonly index: number }
  | { readonly kind: "unavailable"; readonly active: number; readonly limit: number };

/** Slots that hold resources: anything but `free`. A `teardown_failed` slot stays reserved (SCR-3). */
export function activeCount(slots: readonly SlotView[]): number {
  return slots.filter((slot) => slot.state !== "free").length;
}

/** Evictable desktops, best victim first: running, idle, uncontrolled, least recently used. */
export function evictionOrder(slots: readonly SlotView[]): SlotView[] {
  return slots
    .filter((slot) => slot.state === "running" && !slot.controlled && slot.busy === 0)
    .sort((a, b) => a.lastUsedAt - b.lastUsedAt || a.index - b.index);
}

/**
 * What to do for a bot that has no desktop yet. `limit` 0 (or negative) means no cap (CMP-5).
 * Under the cap: the lowest free index (its next generation), else a new index. At the cap: evict
 * the oldest idle uncontrolled desktop, else `unavailable` (MULTI_SCREEN_UNAVAILABLE).
 */
export function planAllocation(slots: readonly SlotView[], limit: number): AllocationPlan {
  const active = activeCount(slots);
  if (limit > 0 && active >= limit) {
    const victim = evictionOrder(slots)[0];
    return victim ? { kind: "evict", index: victim.index } : { kind: "unavailable", active, limit };
  }
  const free = slots.filter((slot) => slot.state === "free").sort((a, b) => a.index - b.index)[0];
  if (free) return { kind: "use", index: free.index, generation: free.generation + 1 };
  const used = new Set(slots.map((slot) => slot.index));
  let index = 0;
  while (used.has(index)) index += 1;
  return { kind: "use", index, generation: 1 };
}

/** Reads `SANDBOX_TEAM_SCREEN_LIMIT`: a positive integer caps, 0 / unset / garbage leaves it unset. */
export function parseScreenLimit(raw: string | undefined): number {
  if (raw === undefined || raw.trim() === "") return 0;
  const value = Number(raw);
  return Number.isInteger(value) && value > 0 ? value : 0;
}
