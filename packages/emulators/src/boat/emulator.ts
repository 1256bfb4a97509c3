/**
 * A loopback Boat API v1 (routes, envelopes, status codes of docs.boat.dev/openapi/boat-v1.yaml)
 * whose sandboxes are real containers of the computer image (`../machines.ts`). Rakazo's Boat
 * client talks to it through its base URL, exactly as to `https://boat.dev/api/v1`.
 *
 * Every call needs the bearer key; then a call no route plays answers 501 `not_emulated`, injected faults
 * (`faults`: 429 with `Retry-After`, 409 `sandbox_busy` per route name) answer next, and the
 * route runs: lifecycle in `sandboxes.ts`, commands and files in `commands.ts`, hosted ports
 * and the desktop in `ports.ts`. The TTL archives a usable sandbox when `archiveAfter` passes on
 * the injected clock (`sweep()`); a deleted sandbox answers 410, an unknown one 404.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { hasBearer, recordRequest } from "../http-util.ts";
import type { MachinePool } from "../machines.ts";
import { NOT_EMULATED_STATUS, notEmulated, Router } from "../router.ts";
import { commandRoutes } from "./commands.ts";
import type { BoatRecord, BoatState } from "./lifecycle.ts";
import { portRoutes } from "./ports.ts";
import { sandboxRoutes } from "./sandboxes.ts";
import { closeListeners, createBoat, fail, removeEntry, sweep, touch } from "./state.ts";

export interface BoatEmulatorOptions {
  readonly machines: MachinePool;
  /** The bearer key clients must send (`boat_…`). */
  readonly apiKey: string;
  /** Epoch ms; tests pass a controllable clock. Default `Date.now`. */
  readonly now?: () => number;
  /** Runs `sweep()` on this period (ms); 0 = only when called. Default 0. */
  readonly sweepEveryMs?: number;
}

interface BoatFaults {
  /** The next `count` requests to `route` (e.g. "stop", "resume", "create") answer 409 `sandbox_busy`. */
  conflict(route: string, count: number): void;
  /** The next `count` requests (any route) answer 429 `rate_limited` with `Retry-After: seconds`. */
  rateLimit(count: number, retryAfterSeconds: number): void;
}

export interface BoatEmulator {
  readonly url: string;
  readonly faults: BoatFaults;
  /** Archives every usable sandbox whose TTL lapsed at `now()`; returns their ids. */
  sweep(): Promise<string[]>;
  /** Puts a sandbox into a terminal state behind the client's back (error, cancelled). */
  setState(id: string, state: Extract<BoatState, "error" | "cancelled">, error: string): Promise<void>;
  /** Marks an archived sandbox's snapshot as expired: resume answers 410. */
  expireSnapshot(id: string): void;
  /** Deletes a sandbox as if through the dashboard (its machine goes at once). */
  vanish(id: string): Promise<void>;
  /** The sandbox as the API would show it, or undefined. */
  inspect(id: string): BoatRecord | undefined;
  /** Resolves when no create/stop/resume/delete is in flight. */
  settled(): Promise<void>;
  /** Every request the emulator answered: method, path (no query), status. */
  readonly requests: readonly { method: string; path: string; status: number }[];
  close(): Promise<void>;
}

export async function startBoatEmulator(options: BoatEmulatorOptions): Promise<BoatEmulator> {
  const boat = createBoat(options.machines, options.now ?? Date.now);
  const router = new Router();
  sandboxRoutes(router, boat);
  commandRoutes(router, boat);
  portRoutes(router, boat);

  const server = http.createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://boat.invalid");
    const path = url.pathname.replace(/^\/api\/v1/, "");
    recordRequest(boat.requests, request, response, path);
    if (!hasBearer(request, options.apiKey)) {
      request.resume();
      return fail(response, 401, "unauthorized", "Unauthorized");
    }
    const route = router.match(request.method ?? "GET", path);
    if (!route) {
      request.resume();
      return fail(response, NOT_EMULATED_STATUS, "not_emulated", notEmulated(request.method, path));
    }
    if (boat.rateLimited.count > 0) {
      boat.rateLimited.count -= 1;
      request.resume();
      return fail(response, 429, "rate_limited", "machine start limit reached (minute window)", {
        "retry-after": String(boat.rateLimited.retryAfterSeconds),
      });
    }
    const conflictsLeft = boat.conflicts.get(route.name) ?? 0;
    if (conflictsLeft > 0) {
      boat.conflicts.set(route.name, conflictsLeft - 1);
      request.resume();
      return fail(response, 409, "sandbox_busy", "another operation on this sandbox is in progress");
    }
    route.run(request, response, url, {}).catch((error: unknown) => {
      if (response.headersSent) response.destroy();
      else fail(response, 500, "internal_error", error instanceof Error ? error.message : String(error));
    });
  });

  const timer = options.sweepEveryMs ? setInterval(() => void sweep(boat), options.sweepEveryMs) : undefined;
  timer?.unref();

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/api/v1`,
    requests: boat.requests,
    faults: {
      conflict(route, count) {
        boat.conflicts.set(route, count);
      },
      rateLimit(count, retryAfterSeconds) {
        boat.rateLimited = { count, retryAfterSeconds };
      },
    },
    sweep: () => sweep(boat),
    async setState(id, state, error) {
      const entry = boat.entries.get(id);
      if (!entry) throw new Error(`no sandbox ${id}`);
      await entry.pending;
      await closeListeners(entry);
      if (entry.containerId) await options.machines.stop(entry.containerId);
      entry.record.error = error;
      touch(boat, entry.record, state);
    },
    expireSnapshot(id) {
      const entry = boat.entries.get(id);
      if (!entry) throw new Error(`no sandbox ${id}`);
      entry.record.snapshotAvailable = false;
    },
    async vanish(id) {
      const entry = boat.entries.get(id);
      if (entry) await removeEntry(boat, entry);
    },
    inspect(id) {
      const record = boat.entries.get(id)?.record;
      return record ? { ...record } : undefined;
    },
    async settled() {
      await Promise.all([...boat.entries.values()].map((e) => e.pending));
    },
    async close() {
      if (timer) clearInterval(timer);
      for (const entry of [...boat.entries.values()]) await removeEntry(boat, entry);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
