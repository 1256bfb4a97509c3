/**
 * Desktop admission as pure decisions (CMP-5): a new desktop starts only when the
 * computer's own cgroup has headroom for what a desktop costs plus a floor kept for the desktops
 * already running, exec and files. Otherwise the oldest idle uncontrolled desktop is torn down to
 * make room, and when none can be, the request is refused at once with a reason. No processes or
 * files here: `cgroup.ts` samples, `desktop-slots.ts` applies the plan.
 */
import { activeCount, evictionOrder, planAllocation, type SlotView } from "./slot-table.ts";

/** Why a desktop was refused; carried to the API as `details.reason` of `MULTI_SCREEN_UNAVAILABLE`. */
export type RefusalReason = "memory" | "pids" | "cpu" | "limit";

/** One reading of the computer's cgroup. A `null` bound means the cgroup sets none. */
export interface CgroupSample {
  /** Bytes in use that cannot simply be dropped (usage minus inactive file cache). */
  readonly memoryUsed: number;
  readonly memoryMax: number | null;
  readonly pidsCurrent: number;
  readonly pidsMax: number | null;
  /** `some avg10` of cpu.pressure, in percent; null where the kernel has no PSI for the cgroup. */
  readonly cpuPressure: number | null;
}

interface DesktopCost {
  readonly memoryBytes: number;
  readonly pids: number;
}

export interface AdmissionPolicy {
  /** What one more desktop is expected to take (Xvfb + Chromium + x11vnc, measured by the bench). */
  readonly desktop: DesktopCost;
  /** Kept free at all times so running desktops, exec and files stay responsive at the limit. */
  readonly floor: DesktopCost;
  /** Refuse new desktops while cpu pressure (some avg10, %) is at or above this; 0 disables. */
  readonly cpuPressureMax: number;
}

export const MIB = 1024 ** 2;

/**
 * Defaults, from the desktops bench on the computer image (docs/decisions.md, "Lighter
 * desktops"): a live desktop holds ~168 MiB of the cgroup (supervisor included), charged as 180
 * so a 1 GiB computer takes five and keeps the floor free; ~40 processes/threads' pids each.
 */
export const DEFAULT_ADMISSION_POLICY: AdmissionPolicy = {
  desktop: { memoryBytes: 180 * MIB, pids: 160 },
  floor: { memoryBytes: 160 * MIB, pids: 128 },
  cpuPressureMax: 0,
};

export type AdmissionPlan =
  | { readonly kind: "use"; readonly index: number; readonly generation: number }
  | { readonly kind: "evict"; readonly index: number; readonly reason: RefusalReason }
  | {
      readonly kind: "unavailable";
      readonly reason: RefusalReason;
      readonly active: number;
      readonly limit: number;
    };

/**
 * Whether one more desktop fits the sample. Desktops still `starting` have not reached their full
 * size yet, so each is charged a whole desktop on top of what the cgroup already shows.
 */
export function headroomVerdict(
  sample: CgroupSample | null,
  policy: AdmissionPolicy,
  starting: number,
): RefusalReason | null {
  const short = shortfall(sample, policy, starting);
  if (short.memoryBytes > 0) return "memory";
  if (short.pids > 0) return "pids";
  if (
    policy.cpuPressureMax > 0 &&
    sample?.cpuPressure != null &&
    sample.cpuPressure >= policy.cpuPressureMax
  ) {
    return "cpu";
  }
  return null;
}

/** How much is missing for one more desktop (0 = enough), per bounded resource. */
function shortfall(sample: CgroupSample | null, policy: AdmissionPolicy, starting: number): DesktopCost {
  if (!sample) return { memoryBytes: 0, pids: 0 };
  const memoryNeed = (starting + 1) * policy.desktop.memoryBytes + policy.floor.memoryBytes;
  const pidsNeed = (starting + 1) * policy.desktop.pids + policy.floor.pids;
  return {
    memoryBytes:
      sample.memoryMax === null ? 0 : Math.max(0, memoryNeed - (sample.memoryMax - sample.memoryUsed)),
    pids: sample.pidsMax === null ? 0 : Math.max(0, pidsNeed - (sample.pidsMax - sample.pidsCurrent)),
  };
}

/**
 * What to do for a bot that has no desktop yet: the explicit cap first (`limit`,
 * SANDBOX_TEAM_SCREEN_LIMIT), then the cgroup's headroom. Short of either, evict the best victim
 * (running, idle, uncontrolled, least recently used); with no victim, refuse with the reason.
 */
export function planAdmission(
  slots: readonly SlotView[],
  limit: number,
  sample: CgroupSample | null,
  policy: AdmissionPolicy,
): AdmissionPlan {
  const base = planAllocation(slots, limit);
  if (base.kind === "evict") return { ...base, reason: "limit" };
  if (base.kind === "unavailable") return { ...base, reason: "limit" };
  const starting = slots.filter((slot) => slot.state === "starting").length;
  const reason = headroomVerdict(sample, policy, starting);
  if (reason === null) return base;
  const victims = evictionOrder(slots);
  // Tear nothing down in vain: evict only when closing every candidate could make room.
  const short = shortfall(sample, policy, starting);
  const enough =
    short.memoryBytes <= victims.length * policy.desktop.memoryBytes &&
    short.pids <= victims.length * policy.desktop.pids;
  const victim = victims[0];
  if (victim && enough) return { kind: "evict", index: victim.index, reason };
  return { kind: "unavailable", reason, active: activeCount(slots), limit };
}

/** Reads a byte count flag/env value in MiB; garbage or non-positive falls back. */
export function parseMiB(raw: string | undefined, fallback: number): number {
  const value = raw === undefined || raw.trim() === "" ? Number.NaN : Number(raw);
  return Number.isFinite(value) && value > 0 ? Math.round(value * MIB) : fallback;
}

export function parseCount(raw: string | undefined, fallback: number): number {
  const value = raw === undefined || raw.trim() === "" ? Number.NaN : Number(raw);
  return Number.isInteger(value) && value >= 0 ? value : fallback;
}

/** What `health` reports of the cgroup and the admission in effect (null: unbounded or unread). */
export function admissionReport(policy: AdmissionPolicy, sample: CgroupSample | null) {
  const cost = (of: DesktopCost) => ({ memoryBytes: of.memoryBytes, pids: of.pids });
  return {
    memory: { usedBytes: sample?.memoryUsed ?? null, maxBytes: sample?.memoryMax ?? null },
    pids: { current: sample?.pidsCurrent ?? null, max: sample?.pidsMax ?? null },
    cpuPressure: sample?.cpuPressure ?? null,
    desktopEstimate: cost(policy.desktop),
    admission: {
      desktop: cost(policy.desktop),
      floor: cost(policy.floor),
      cpuPressureMax: policy.cpuPressureMax,
    },
  };
}
