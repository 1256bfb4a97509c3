/**
 * `SandboxDesktop` over the in-computer supervisor: the one desktop implementation every
 * provider shares (CMP-8). Providers supply only a `SupervisorTransport`.
 */
import { SandboxError } from "./errors.ts";
import type {
  ActResult,
  DesktopAction,
  DesktopCapacity,
  DesktopSlotInfo,
  Observation,
  SandboxDesktop,
  SlotRef,
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
  /** Marks the bot's desktop as controlled (never evicted at the cap, CMP-5). */
  setControlled(botId: string, controlled: boolean): Promise<void>;
  capacity(): Promise<DesktopCapacity>;
}

function malformed(method: string, what: string): SandboxError {
  return new SandboxError("SANDBOX_PROVIDER_ERROR", `${method}: malformed supervisor result (${what})`);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function slotRef(method: string, value: unknown): SlotRef {
  if (!isRecord(value) || typeof value.index !== "number" || typeof value.generation !== "number") {
    throw malformed(method, "slot");
  }
  return { index: value.index, generation: value.generation };
}

function toObservation(value: unknown): Observation {
  const method = "desktop.observe";
  if (
    !isRecord(value) ||
    typeof value.pngBase64 !== "string" ||
    typeof value.width !== "number" ||
    typeof value.height !== "number" ||
    typeof value.frameHash !== "string"
  ) {
    throw malformed(method, "observation");
  }
  return {
    png: new Uint8Array(Buffer.from(value.pngBase64, "base64")),
    width: value.width,
    height: value.height,
    frameHash: value.frameHash,
    slot: slotRef(method, value.slot),
  };
}

function toActResult(value: unknown): ActResult {
  if (!isRecord(value) || typeof value.completed !== "number" || typeof value.total !== "number") {
    throw malformed("desktop.act", "act result");
  }
  const error = value.error;
  if (error === undefined) return { completed: value.completed, total: value.total };
  if (
    !isRecord(error) ||
    typeof error.code !== "string" ||
    typeof error.message !== "string" ||
    typeof error.index !== "number"
  ) {
    throw malformed("desktop.act", "act error");
  }
  return {
    completed: value.completed,
    total: value.total,
    error: { code: error.code, message: error.message, index: error.index },
  };
}

function toSlotInfo(value: unknown): SupervisedSlotInfo {
  const method = "desktop.list";
  if (
    !isRecord(value) ||
    typeof value.botId !== "string" ||
    typeof value.display !== "number" ||
    typeof value.startedAt !== "string" ||
    typeof value.lastUsedAt !== "string" ||
    typeof value.controlled !== "boolean" ||
    typeof value.state !== "string" ||
    typeof value.vncSocket !== "string" ||
    typeof value.debugPort !== "number"
  ) {
    throw malformed(method, "slot info");
  }
  return {
    botId: value.botId,
    slot: slotRef(method, value.slot),
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
    async list() {
      const result = await transport.call("desktop.list", {});
      if (!Array.isArray(result)) throw malformed("desktop.list", "not an array");
      return result.map(toSlotInfo);
    },
    async setControlled(botId, controlled) {
      await transport.call("desktop.setControlled", { botId, controlled });
    },
    async capacity() {
      return toCapacity(await transport.call("health", {}));
    },
  };
}

/** The supervisor's health as a capacity report; only finite numbers cross (the computer is untrusted). */
function toCapacity(raw: unknown): DesktopCapacity {
  const value = (typeof raw === "object" && raw !== null ? raw : {}) as Record<string, unknown>;
  const nested = (key: string, field: string): unknown =>
    typeof value[key] === "object" && value[key] !== null
      ? (value[key] as Record<string, unknown>)[field]
      : undefined;
  const count = (v: unknown): number | null =>
    typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : null;
  return {
    live: count(value.live) ?? count(value.active) ?? 0,
    limit: count(value.limit) ?? 0,
    memoryUsedBytes: count(nested("memory", "usedBytes")),
    memoryMaxBytes: count(nested("memory", "maxBytes")),
    pids: count(nested("pids", "current")),
    pidsMax: count(nested("pids", "max")),
    desktopMemoryBytes: count(nested("desktopEstimate", "memoryBytes")),
  };
}
