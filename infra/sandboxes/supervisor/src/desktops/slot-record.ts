/**
 * One slot as `DesktopSlots` holds it: the table's view (`SlotView`) plus when it started and its
 * running stack. A free slot holds no bot and no stack; `freeSlot`/`markFree` are the one way
 * there, so no field of a former occupant survives into the next.
 */
import type { SlotInfoWire, SlotState } from "../daemon/protocol.ts";
import type { DesktopStack } from "./desktop-stack.ts";
import type { StackPlan } from "./stack-argv.ts";

export interface Slot {
  readonly index: number;
  generation: number;
  state: SlotState;
  botId: string | null;
  startedAt: number;
  lastUsedAt: number;
  controlled: boolean;
  busy: number;
  stack: DesktopStack | null;
}

export function freeSlot(index: number, generation: number): Slot {
  return {
    index,
    generation,
    state: "free",
    botId: null,
    startedAt: 0,
    lastUsedAt: 0,
    controlled: false,
    busy: 0,
    stack: null,
  };
}

export function markFree(slot: Slot): void {
  slot.state = "free";
  slot.botId = null;
  slot.stack = null;
  slot.controlled = false;
  slot.busy = 0;
}

/** `desktop.list`'s entry for an occupied slot, its paths and port from the slot's plan. */
export function slotInfo(slot: Slot, plan: StackPlan): SlotInfoWire {
  return {
    botId: slot.botId ?? "",
    slot: { index: slot.index, generation: slot.generation },
    display: plan.display,
    state: slot.state,
    startedAt: new Date(slot.startedAt).toISOString(),
    lastUsedAt: new Date(slot.lastUsedAt).toISOString(),
    controlled: slot.controlled,
    vncSocket: plan.vncSocket,
    debugPort: plan.debugPort,
  };
}
