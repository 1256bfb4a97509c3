/**
 * `SandboxDesktop` over the in-computer supervisor: the one desktop implementation every
 * provider shares (CMP-8). Providers supply only a `SupervisorTransport`.
 */
import type { ActResultWire, HealthResult, ObserveResult, SlotInfoWire } from "@rakazo/protocol";
import type {
  ActResult,
  DesktopAction,
  DesktopCapacity,
  DesktopSlotInfo,
  Observation,
  SandboxDesktop,
} from "./provider.ts";
import type { SupervisorTransport } from "./supervisor-client.ts";

/** What `desktop.list` adds to `DesktopSlotInfo` for the screen gateway and page browser. */
export interface SupervisedSlotInfo extends DesktopSlotInfo {
  readonly state: string;
  /** The slot+generation-unique RFB socket inside the computer (SCR-2). */
  readonly vncSocket: string;
  /** Chromium's DevTools port on the computer's loopback (BRW-2). */
  readonly debugPort: number;
}

export interface SupervisedDesktop extends SandboxDesktop {
  list(): Promise<SupervisedSlotInfo[]>;
  /**
   * Starts the screen server (x11vnc) of the bot's running desktop if it has none yet and
   * answers its RFB socket inside the computer. Viewers through the screen gateway need no such
   * call; a tool that dials `vncSocket` itself does (desktops start without x11vnc).
   */
  openScreen(botId: string): Promise<{ vncSocket: string }>;
  /** Marks the bot's desktop as controlled (never evicted at the cap, CMP-5). */
  setControlled(botId: string, controlled: boolean): Promise<void>;
  capacity(): Promise<DesktopCapacity>;
}

/**
 * Results arrive validated against the protocol's result schemas (the transport's `call`);
 * these only convert wire shapes (base64, ISO dates) into the provider's.
 */
function toObservation(value: ObserveResult): Observation {
  return {
    png: new Uint8Array(Buffer.from(value.pngBase64, "base64")),
    width: value.width,
    height: value.height,
    frameHash: value.frameHash,
    slot: { index: value.slot.index, generation: value.slot.generation },
  };
}

function toActResult(value: ActResultWire): ActResult {
  const { completed, total, error } = value;
  if (error === undefined) return { completed, total };
  return { completed, total, error: { code: error.code, message: error.message, index: error.index } };
}

function toSlotInfo(value: SlotInfoWire): SupervisedSlotInfo {
  return {
    botId: value.botId,
    slot: { index: value.slot.index, generation: value.slot.generation },
    display: value.display,
    startedAt: new Date(value.startedAt),
    lastUsedAt: new Date(value.lastUsedAt),
    controlled: value.controlled,
    state: value.state,
    vncSocket: value.vncSocket,
    debugPort: value.debugPort,
  };
}

export function createSupervisedDesktop(transport: SupervisorTransport): SupervisedDesktop {
  return {
    async observe(botId) {
      return toObservation(await transport.call("desktop.observe", { botId }));
    },
    async act(botId, actions: readonly DesktopAction[]) {
      return toActResult(await transport.call("desktop.act", { botId, actions }));
    },
    async release(botId) {
      await transport.call("desktop.release", { botId });
    },
    async closeBrowser(botId) {
      await transport.call("desktop.closeBrowser", { botId });
    },
    async list() {
      return (await transport.call("desktop.list", {})).map(toSlotInfo);
    },
    async openScreen(botId) {
      return { vncSocket: (await transport.call("desktop.openScreen", { botId })).vncSocket };
    },
    async setControlled(botId, controlled) {
      await transport.call("desktop.setControlled", { botId, controlled });
    },
    async capacity() {
      return toCapacity(await transport.call("health", {}));
    },
  };
}

/** The supervisor's health as a capacity report; only finite, non-negative numbers cross (the computer is untrusted). */
function toCapacity(value: HealthResult): DesktopCapacity {
  const count = (v: number | null): number | null => (v !== null && Number.isFinite(v) && v >= 0 ? v : null);
  return {
    live: count(value.live) ?? count(value.active) ?? 0,
    limit: count(value.limit) ?? 0,
    memoryUsedBytes: count(value.memory.usedBytes),
    memoryMaxBytes: count(value.memory.maxBytes),
    pids: count(value.pids.current),
    pidsMax: count(value.pids.max),
    desktopMemoryBytes: count(value.desktopEstimate.memoryBytes),
  };
}
