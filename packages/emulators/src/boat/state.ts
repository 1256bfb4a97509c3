/**
 * The Boat emulator's state — sandboxes (a lifecycle record and its machine), deletion
 * operations, idempotency keys, injected faults — the lifecycle steps the route groups share,
 * and Boat's error envelope (`{ok:false, type:"sandbox.error", status, code, message, …}`).
 */
import { randomBytes } from "node:crypto";
import type http from "node:http";
import { type RequestRecord, sameSecret, sendJson, shellQuote } from "../http-util.ts";
import { MACHINE_HOME, type MachinePool } from "../machines.ts";
import { type PortListener, startPortListener } from "../port-proxy.ts";
import type { Call, Handler } from "../router.ts";
import {
  type BoatRecord,
  type BoatState,
  type Decision,
  decideCommand,
  isUsable,
  ttlLapsed,
} from "./lifecycle.ts";

export interface Entry {
  readonly record: BoatRecord;
  containerId: string | null;
  /** One token per protected port, minted per generation. */
  readonly portTokens: Map<number, { token: string; generation: number; public: boolean }>;
  readonly listeners: Map<number, PortListener>;
  desktopAsked: number;
  /** Work in flight (create, stop, resume); awaited by `settled()`. */
  pending: Promise<void>;
}

export interface DeletionOperation {
  readonly id: string;
  readonly targetId: string;
  status: "pending" | "processing" | "completed";
  readonly requestedAt: number;
  completedAt: number | null;
  readonly done: Promise<void>;
}

export interface Boat {
  readonly machines: MachinePool;
  readonly now: () => number;
  readonly entries: Map<string, Entry>;
  /** Ids of deleted sandboxes: they answer 410, not 404. */
  readonly deleted: Set<string>;
  readonly operations: Map<string, DeletionOperation>;
  /** Idempotency-Key → the create's body hash and, once minted, its sandbox. */
  readonly idempotency: Map<string, { bodyHash: string; sandboxId: string | null }>;
  /** Route name → how many more calls answer 409 `sandbox_busy`. */
  readonly conflicts: Map<string, number>;
  rateLimited: { count: number; retryAfterSeconds: number };
  readonly requests: RequestRecord[];
}

export function createBoat(machines: MachinePool, now: () => number): Boat {
  return {
    machines,
    now,
    entries: new Map(),
    deleted: new Set(),
    operations: new Map(),
    idempotency: new Map(),
    conflicts: new Map(),
    rateLimited: { count: 0, retryAfterSeconds: 1 },
    requests: [],
  };
}

export function fail(
  response: http.ServerResponse,
  status: number,
  code: string,
  message: string,
  headers: Record<string, string> = {},
): void {
  sendJson(
    response,
    status,
    {
      ok: false,
      type: "sandbox.error",
      status,
      code,
      message,
      requestId: `req_${randomBytes(8).toString("hex")}`,
      error: { code, message, status },
    },
    headers,
  );
}

export function refuse(response: http.ServerResponse, decision: Exclude<Decision, { ok: true }>): void {
  fail(response, decision.status, decision.code, decision.message);
}

export function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

export function view(record: BoatRecord): Record<string, unknown> {
  if (record.state === "cancelled") return { id: record.id, state: record.state, error: record.error };
  return {
    id: record.id,
    name: record.name,
    state: record.state,
    error: record.error,
    type: "default",
    subdomain: record.subdomain,
    createdAt: iso(record.createdAt),
    updatedAt: iso(record.updatedAt),
    archiveAfter: iso(record.archiveAfter),
    desktopAvailable: isUsable(record.state),
    // Secret-bearing URLs are handed out by POST /desktop only.
    desktopUrl: null,
    snapshotAvailable: record.snapshotAvailable,
    environment: record.noEnv ? null : "base",
  };
}

export function touch(boat: Boat, record: BoatRecord, state?: BoatState): void {
  if (state) record.state = state;
  record.updatedAt = boat.now();
}

/** Runs lifecycle work in the background, as Boat does after its 202. */
export function background(boat: Boat, entry: Entry, work: () => Promise<void>): void {
  entry.pending = entry.pending.then(work).catch((error: unknown) => {
    touch(boat, entry.record, "error");
    entry.record.error = error instanceof Error ? error.message : String(error);
  });
}

export async function closeListeners(entry: Entry): Promise<void> {
  for (const listener of entry.listeners.values()) await listener.close();
  entry.listeners.clear();
}

export function archive(boat: Boat, entry: Entry): void {
  touch(boat, entry.record, "archiving");
  background(boat, entry, async () => {
    if (entry.containerId) await boat.machines.stop(entry.containerId);
    entry.record.snapshotAvailable = true;
    entry.record.archiveAfter = null;
    touch(boat, entry.record, "archived");
  });
}

export async function removeEntry(boat: Boat, entry: Entry): Promise<void> {
  boat.entries.delete(entry.record.id);
  boat.deleted.add(entry.record.id);
  await closeListeners(entry);
  await entry.pending;
  if (entry.containerId) await boat.machines.remove(entry.containerId);
}

/** Archives every usable sandbox whose TTL lapsed at `now()`; returns their ids. */
export async function sweep(boat: Boat): Promise<string[]> {
  const lapsed: string[] = [];
  for (const entry of boat.entries.values()) {
    if (ttlLapsed(entry.record, boat.now())) {
      archive(boat, entry);
      lapsed.push(entry.record.id);
    }
  }
  await Promise.all([...boat.entries.values()].map((e) => e.pending));
  return lapsed;
}

function token(): string {
  return randomBytes(24).toString("base64url");
}

/** The protected URL of a port: the listener's origin, with `_token` unless public. */
export async function hostPort(boat: Boat, entry: Entry, port: number, publicAccess: boolean) {
  let grant = entry.portTokens.get(port);
  if (!grant || grant.generation !== entry.record.generation || grant.public !== publicAccess) {
    grant = { token: token(), generation: entry.record.generation, public: publicAccess };
    entry.portTokens.set(port, grant);
  }
  let listener = entry.listeners.get(port);
  if (!listener) {
    listener = await startPortListener({
      connect: async () => {
        if (!entry.containerId) throw new Error("sandbox not running");
        return boat.machines.connectPort(entry.containerId, port);
      },
      admit: (request) => {
        const url = new URL(request.url ?? "/", "http://boat.invalid");
        const current = entry.portTokens.get(port);
        if (!current) return { ok: false, status: 404 };
        const given = url.searchParams.get("_token");
        url.searchParams.delete("_token");
        const path = `${url.pathname}${url.search}`;
        // A token of an earlier generation (before a resume) is refused like a wrong one.
        if (
          !current.public &&
          (given === null ||
            current.generation !== entry.record.generation ||
            !sameSecret(given, current.token))
        ) {
          return { ok: false, status: 401 };
        }
        // Checked per request, not at connect: a pinned stream must not outlive a stop.
        if (!entry.containerId || !isUsable(entry.record.state)) return { ok: false, status: 502 };
        return { ok: true, path };
      },
    });
    entry.listeners.set(port, listener);
  }
  return { url: publicAccess ? listener.url : `${listener.url}/?_token=${grant.token}`, grant };
}

export function containerOf(entry: Entry): string {
  if (!entry.containerId) throw new Error(`sandbox ${entry.record.id} has no machine yet`);
  return entry.containerId;
}

/**
 * The guard of `/sandboxes/:id…`: the sandbox, or 410 `sandbox_deleted` for a deleted one and
 * 404 `sandbox_not_found` for an unknown one.
 */
export function onEntry<P extends string>(
  boat: Boat,
  handle: (entry: Entry, id: string, call: Call<P>) => Promise<void> | void,
): Handler<P> {
  return (call) => {
    const id = (call.params as Readonly<Record<string, string>>).id ?? "";
    const entry = boat.entries.get(id);
    if (entry) return handle(entry, id, call);
    if (boat.deleted.has(id)) fail(call.response, 410, "sandbox_deleted", `sandbox ${id} was deleted`);
    else fail(call.response, 404, "sandbox_not_found", `sandbox ${id} not found`);
  };
}

/** Waits up to `timeoutMs` for a starting sandbox to take commands. */
export async function waitUsable(entry: Entry, timeoutMs: number): Promise<Decision> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const decision = decideCommand(entry.record);
    if (decision !== "wait") return decision;
    await new Promise((r) => setTimeout(r, 50));
  }
  return { ok: false, status: 409, code: "boat_starting", message: "sandbox is still starting" };
}

/** Resolves a path as the machine's user; null when it leaves /home/user and /tmp. */
export async function resolvePath(boat: Boat, containerId: string, path: string): Promise<string | null> {
  const result = await boat.machines.exec(containerId, {
    command: `realpath -m -- ${shellQuote(path)}`,
    cwd: MACHINE_HOME,
  });
  const resolved = result.stdout.toString().trim();
  const allowed = ["/home/user", "/tmp"].some((root) => resolved === root || resolved.startsWith(`${root}/`));
  return result.exitCode === 0 && allowed ? resolved : null;
}
