/**
 * Boat's sandbox lifecycle as the emulator plays it (Boat API v1, docs.boat.dev/openapi/
 * boat-v1.yaml): pure decisions over one sandbox record, tested without machines.
 *
 *   create ─▶ provisioning ─▶ idle ─(stop)─▶ archiving ─▶ archived ─(resume)─▶ provisioning ─▶ idle
 *                                  └─(TTL lapses: archiveAfter ≤ now)─▶ archiving ─▶ …
 *   error, cancelled: terminal (no recover route). A cancelled sandbox is reported once, then 404.
 *   delete: the record is gone at once (404 on get), the deletion operation finishes later.
 *
 * `ready`, `idle` and `running` are usable. Resume rotates every protected-port and desktop
 * token (the "stream tokens"): a URL handed out before the resume no longer admits anyone.
 */

const BOAT_STATES = [
  "init",
  "provisioning",
  "provisioned",
  "cloning",
  "ready",
  "idle",
  "running",
  "archiving",
  "archived",
  "error",
  "cancelled",
] as const;
export type BoatState = (typeof BOAT_STATES)[number];

const USABLE_STATES: readonly BoatState[] = ["ready", "idle", "running"];
const STARTING_STATES: readonly BoatState[] = ["init", "provisioning", "provisioned", "cloning"];

export interface BoatRecord {
  readonly id: string;
  name: string;
  state: BoatState;
  error: string | null;
  /** Seconds before automatic archival, null = never. */
  ttlSeconds: number | null;
  /** Epoch ms of automatic archival, null = never. */
  archiveAfter: number | null;
  readonly createdAt: number;
  updatedAt: number;
  readonly subdomain: string;
  /** Whether the archived disk can still be restored ("snapshot expired" when false). */
  snapshotAvailable: boolean;
  /** Bumped at every resume: the protected tokens of one generation die with it. */
  generation: number;
  readonly noEnv: boolean;
}

export type Decision =
  | { readonly ok: true }
  | { readonly ok: false; readonly status: number; readonly code: string; readonly message: string };

const refuse = (status: number, code: string, message: string): Decision => ({
  ok: false,
  status,
  code,
  message,
});

export function isUsable(state: BoatState): boolean {
  return USABLE_STATES.includes(state);
}

function isStarting(state: BoatState): boolean {
  return STARTING_STATES.includes(state);
}

/** `POST /stop`: archiving and archived answer 202 again; a start in flight is a state race. */
export function decideStop(record: BoatRecord): Decision {
  if (isUsable(record.state) || record.state === "archiving" || record.state === "archived")
    return { ok: true };
  if (isStarting(record.state)) {
    return refuse(409, "sandbox_busy", `sandbox is ${record.state}; stop it once it is ready`);
  }
  return refuse(409, "sandbox_not_ready", `sandbox is ${record.state} and cannot be stopped`);
}

/** `POST /resume`: only an archived sandbox with its snapshot resumes; a running one is a no-op. */
export function decideResume(record: BoatRecord): Decision {
  if (isUsable(record.state) || isStarting(record.state)) return { ok: true };
  if (record.state === "archiving") {
    return refuse(409, "sandbox_busy", "sandbox is still archiving; resume it once it is archived");
  }
  if (record.state === "archived") {
    return record.snapshotAvailable
      ? { ok: true }
      : refuse(410, "snapshot_expired", "the sandbox's archived snapshot has expired; it cannot be resumed");
  }
  return refuse(
    409,
    "sandbox_not_resumable",
    `sandbox is ${record.state}${record.error ? `: ${record.error}` : ""}`,
  );
}

/** Commands: a starting sandbox is waited for (up to 60 s); anything else not usable is refused. */
export function decideCommand(record: BoatRecord): Decision | "wait" {
  if (isUsable(record.state)) return { ok: true };
  if (isStarting(record.state)) return "wait";
  return refuse(409, "sandbox_not_ready", `sandbox is ${record.state}; resume it first`);
}

/** Whether the TTL has lapsed at `now` (only a usable sandbox is archived by its TTL). */
export function ttlLapsed(record: BoatRecord, now: number): boolean {
  return isUsable(record.state) && record.archiveAfter !== null && record.archiveAfter <= now;
}

export function archiveAfterFor(ttlSeconds: number | null, now: number): number | null {
  return ttlSeconds === null ? null : now + ttlSeconds * 1000;
}

/** `ttlSeconds` as the API accepts it: a positive integer up to 30 days, or null. */
export function parseTtl(value: unknown, fallback: number | null): number | null | "invalid" {
  if (value === undefined) return fallback;
  if (value === null || value === "infinite") return null;
  if (typeof value === "number" && Number.isInteger(value) && value >= 1 && value <= 2_592_000) return value;
  return "invalid";
}
