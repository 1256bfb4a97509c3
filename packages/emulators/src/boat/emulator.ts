/**
 * A loopback Boat API v1 (routes, envelopes, status codes of docs.boat.dev/openapi/boat-v1.yaml)
 * whose sandboxes are real containers of the computer image (`../machines.ts`). Rakazo's Boat
 * client talks to it through its base URL, exactly as to `https://boat.dev/api/v1`.
 *
 * Played faithfully: 202 create with `Idempotency-Key` (same key and body → same sandbox, a key
 * still minting → 409 `idempotency_in_progress`, another body → 409 `idempotency_key_reused`);
 * stop → `archiving` → `archived` (the container is stopped, its disk kept); resume →
 * `provisioning` → `idle` with rotated port and desktop tokens; the TTL archives a usable
 * sandbox when `archiveAfter` passes on the injected clock (`sweep()`); delete needs
 * `X-Ascii-Confirm-Delete: <id>` and answers a deletion operation to poll; a deleted sandbox
 * answers 410, an unknown one 404; `cancelled` is shown once, then 404. `faults` injects 409
 * state races and 429s with a `Retry-After` for the translation tests.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { isRecord, readJson, sendJson, shellQuote } from "../http-util.ts";
import { MACHINE_HOME, type MachinePool } from "../machines.ts";
import { type PortListener, startPortListener } from "../port-proxy.ts";
import {
  archiveAfterFor,
  type BoatRecord,
  type BoatState,
  type Decision,
  decideCommand,
  decideResume,
  decideStop,
  isUsable,
  parseTtl,
  ttlLapsed,
} from "./lifecycle.ts";

export interface BoatEmulatorOptions {
  readonly machines: MachinePool;
  /** The bearer key clients must send (`boat_…`). */
  readonly apiKey: string;
  /** Epoch ms; tests pass a controllable clock. Default `Date.now`. */
  readonly now?: () => number;
  /** Runs `sweep()` on this period (ms); 0 = only when called. Default 0. */
  readonly sweepEveryMs?: number;
}

interface Entry {
  readonly record: BoatRecord;
  containerId: string | null;
  /** One token per protected port, minted per generation. */
  readonly portTokens: Map<number, { token: string; generation: number; public: boolean }>;
  readonly listeners: Map<number, PortListener>;
  desktopAsked: number;
  /** Work in flight (create, stop, resume); awaited by `settled()`. */
  pending: Promise<void>;
}

interface DeletionOperation {
  readonly id: string;
  readonly targetId: string;
  status: "pending" | "processing" | "completed";
  readonly requestedAt: number;
  completedAt: number | null;
  readonly done: Promise<void>;
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

const ID_ALPHABET = "23456789abcdefghjkmnpqrstuvwxyz";
const WORDS = ["frazil", "pneuma", "rallye", "otter", "swift", "harbor", "keel", "mast", "tide", "buoy"];

function boatId(): string {
  const bytes = randomBytes(8);
  return `bx_${Array.from(bytes, (b) => ID_ALPHABET[b % ID_ALPHABET.length]).join("")}`;
}

function word(): string {
  return WORDS[(randomBytes(1)[0] ?? 0) % WORDS.length] ?? "boat";
}

function token(): string {
  return randomBytes(24).toString("base64url");
}

function sameSecret(given: string, expected: string): boolean {
  const a = createHash("sha256").update(given).digest();
  const b = createHash("sha256").update(expected).digest();
  return timingSafeEqual(a, b);
}

function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

function view(record: BoatRecord): Record<string, unknown> {
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

export async function startBoatEmulator(options: BoatEmulatorOptions): Promise<BoatEmulator> {
  const now = options.now ?? Date.now;
  const entries = new Map<string, Entry>();
  const deleted = new Set<string>();
  const operations = new Map<string, DeletionOperation>();
  const idempotency = new Map<string, { bodyHash: string; sandboxId: string | null }>();
  const conflicts = new Map<string, number>();
  let rateLimited = { count: 0, retryAfterSeconds: 1 };
  const requests: { method: string; path: string; status: number }[] = [];

  const fail = (response: http.ServerResponse, status: number, code: string, message: string, headers = {}) =>
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

  const refuse = (response: http.ServerResponse, decision: Exclude<Decision, { ok: true }>) =>
    fail(response, decision.status, decision.code, decision.message);

  const touch = (record: BoatRecord, state?: BoatState) => {
    if (state) record.state = state;
    record.updatedAt = now();
  };

  /** Runs lifecycle work in the background, as Boat does after its 202. */
  const background = (entry: Entry, work: () => Promise<void>) => {
    entry.pending = entry.pending.then(work).catch((error: unknown) => {
      touch(entry.record, "error");
      entry.record.error = error instanceof Error ? error.message : String(error);
    });
  };

  const closeListeners = async (entry: Entry) => {
    for (const listener of entry.listeners.values()) await listener.close();
    entry.listeners.clear();
  };

  const archive = (entry: Entry) => {
    touch(entry.record, "archiving");
    background(entry, async () => {
      if (entry.containerId) await options.machines.stop(entry.containerId);
      entry.record.snapshotAvailable = true;
      entry.record.archiveAfter = null;
      touch(entry.record, "archived");
    });
  };

  const removeEntry = async (entry: Entry) => {
    entries.delete(entry.record.id);
    deleted.add(entry.record.id);
    await closeListeners(entry);
    await entry.pending;
    if (entry.containerId) await options.machines.remove(entry.containerId);
  };

  /** The protected URL of a port: the listener's origin, with `_token` unless public. */
  const hostPort = async (entry: Entry, port: number, publicAccess: boolean) => {
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
          return options.machines.connectPort(entry.containerId, port);
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
  };

  const containerOf = (entry: Entry): string => {
    if (!entry.containerId) throw new Error(`sandbox ${entry.record.id} has no machine yet`);
    return entry.containerId;
  };

  const lookup = (response: http.ServerResponse, id: string): Entry | undefined => {
    const entry = entries.get(id);
    if (entry) return entry;
    if (deleted.has(id)) fail(response, 410, "sandbox_deleted", `sandbox ${id} was deleted`);
    else fail(response, 404, "sandbox_not_found", `sandbox ${id} not found`);
    return undefined;
  };

  const waitUsable = async (entry: Entry, timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const decision = decideCommand(entry.record);
      if (decision !== "wait") return decision;
      await new Promise((r) => setTimeout(r, 50));
    }
    return { ok: false, status: 409, code: "boat_starting", message: "sandbox is still starting" } as const;
  };

  /** Resolves a path as the machine's user; null when it leaves /home/user and /tmp. */
  const resolvePath = async (containerId: string, path: string): Promise<string | null> => {
    const result = await options.machines.exec(containerId, {
      command: `realpath -m -- ${shellQuote(path)}`,
      cwd: MACHINE_HOME,
    });
    const resolved = result.stdout.toString().trim();
    const allowed = ["/home/user", "/tmp"].some(
      (root) => resolved === root || resolved.startsWith(`${root}/`),
    );
    return result.exitCode === 0 && allowed ? resolved : null;
  };

  const routes: {
    method: string;
    pattern: RegExp;
    name: string;
    handle: (
      request: http.IncomingMessage,
      response: http.ServerResponse,
      match: string[],
      url: URL,
    ) => Promise<void>;
  }[] = [
    {
      method: "POST",
      pattern: /^\/sandboxes$/,
      name: "create",
      async handle(request, response) {
        const body = await readJson(request);
        if (!isRecord(body))
          return fail(response, 400, "invalid_json", "Request body must be a JSON object.");
        const ttl = parseTtl(body.ttlSeconds, 3600);
        if (ttl === "invalid")
          return fail(response, 400, "invalid_ttl", "ttlSeconds must be 1..2592000 or null");
        const key = request.headers["idempotency-key"];
        const bodyHash = createHash("sha256").update(JSON.stringify(body)).digest("hex");
        if (typeof key === "string") {
          const seen = idempotency.get(key);
          if (seen && seen.bodyHash !== bodyHash) {
            return fail(
              response,
              409,
              "idempotency_key_reused",
              "Idempotency-Key was used with another body",
            );
          }
          if (seen && seen.sandboxId === null) {
            return fail(response, 409, "idempotency_in_progress", "a create with this key is still minting");
          }
          const existing = seen?.sandboxId ? entries.get(seen.sandboxId) : undefined;
          if (existing) {
            return sendJson(response, 202, {
              ok: true,
              type: "sandbox.created",
              status: isUsable(existing.record.state) ? "ready" : "provisioning",
              ttlSeconds: existing.record.ttlSeconds,
              sandbox: view(existing.record),
            });
          }
          idempotency.set(key, { bodyHash, sandboxId: null });
        }
        const at = now();
        const id = boatId();
        const record: BoatRecord = {
          id,
          name: `Sandbox ${new Date(at).toISOString().slice(0, 16).replace("T", " ")}`,
          state: "provisioning",
          error: null,
          ttlSeconds: ttl,
          archiveAfter: archiveAfterFor(ttl, at),
          createdAt: at,
          updatedAt: at,
          subdomain: `${word()}-${word()}-${id.slice(3)}`,
          snapshotAvailable: false,
          generation: 1,
          noEnv: body.noEnv === true,
        };
        const entry: Entry = {
          record,
          containerId: null,
          portTokens: new Map(),
          listeners: new Map(),
          desktopAsked: 0,
          pending: Promise.resolve(),
        };
        entries.set(id, entry);
        if (typeof key === "string") idempotency.set(key, { bodyHash, sandboxId: id });
        background(entry, async () => {
          entry.containerId = await options.machines.create(id.replace("_", "-"));
          if (entries.has(id)) touch(record, "idle");
        });
        sendJson(response, 202, {
          ok: true,
          type: "sandbox.created",
          status: "provisioning",
          ttlSeconds: ttl,
          sandbox: view(record),
        });
      },
    },
    {
      method: "GET",
      pattern: /^\/sandboxes$/,
      name: "list",
      async handle(_request, response, _match, url) {
        const limit = Math.min(Number(url.searchParams.get("limit") ?? 100) || 100, 200);
        const states = url.searchParams.get("state")?.split(",").filter(Boolean);
        const all = [...entries.values()]
          .map((e) => e.record)
          .filter((r) => r.state !== "cancelled" && (!states || states.includes(r.state)))
          .sort((a, b) => b.createdAt - a.createdAt || a.id.localeCompare(b.id));
        const cursor = url.searchParams.get("cursor");
        const start = cursor ? Math.max(0, all.findIndex((r) => r.id === cursor) + 1) : 0;
        const page = all.slice(start, start + limit);
        const hasMore = start + limit < all.length;
        sendJson(response, 200, {
          ok: true,
          type: "sandbox.list",
          sandboxes: page.map(view),
          pageInfo: { nextCursor: hasMore ? (page.at(-1)?.id ?? null) : null, hasMore, limit },
        });
      },
    },
    {
      method: "GET",
      pattern: /^\/sandboxes\/([^/]+)$/,
      name: "get",
      async handle(_request, response, [, id = ""]) {
        const entry = lookup(response, id);
        if (!entry) return;
        sendJson(response, 200, { ok: true, type: "sandbox.info", sandbox: view(entry.record) });
        // Cancelled is reported once, then the sandbox is not found (404, not 410).
        if (entry.record.state === "cancelled") {
          entries.delete(id);
          await closeListeners(entry);
          if (entry.containerId) await options.machines.remove(entry.containerId);
        }
      },
    },
    {
      method: "PATCH",
      pattern: /^\/sandboxes\/([^/]+)$/,
      name: "update",
      async handle(request, response, [, id = ""]) {
        const entry = lookup(response, id);
        if (!entry) return;
        const body = await readJson(request);
        if (!isRecord(body))
          return fail(response, 400, "invalid_json", "Request body must be a JSON object.");
        if (body.name !== undefined) {
          if (typeof body.name !== "string" || body.name.length === 0 || body.name.length > 200) {
            return fail(response, 400, "invalid_name", "name must be a non-empty string");
          }
          entry.record.name = body.name;
        }
        if (body.ttlSeconds !== undefined) {
          const ttl = parseTtl(body.ttlSeconds, entry.record.ttlSeconds);
          if (ttl === "invalid")
            return fail(response, 400, "invalid_ttl", "ttlSeconds must be 1..2592000 or null");
          entry.record.ttlSeconds = ttl;
          // Setting the TTL restarts its count from now (how a client keeps a busy sandbox up).
          if (isUsable(entry.record.state)) entry.record.archiveAfter = archiveAfterFor(ttl, now());
        }
        touch(entry.record);
        sendJson(response, 200, { ok: true, type: "sandbox.updated", sandbox: view(entry.record) });
      },
    },
    {
      method: "POST",
      pattern: /^\/sandboxes\/([^/]+)\/stop$/,
      name: "stop",
      async handle(_request, response, [, id = ""]) {
        const entry = lookup(response, id);
        if (!entry) return;
        const decision = decideStop(entry.record);
        if (!decision.ok) return refuse(response, decision);
        if (isUsable(entry.record.state)) archive(entry);
        sendJson(response, 202, {
          ok: true,
          type: "sandbox.stopping",
          id,
          status: "archiving",
          sandbox: view(entry.record),
        });
      },
    },
    {
      method: "POST",
      pattern: /^\/sandboxes\/([^/]+)\/resume$/,
      name: "resume",
      async handle(request, response, [, id = ""]) {
        const entry = lookup(response, id);
        if (!entry) return;
        const body = await readJson(request);
        const decision = decideResume(entry.record);
        if (!decision.ok) return refuse(response, decision);
        if (entry.record.state === "archived") {
          const ttl = parseTtl(isRecord(body) ? body.ttlSeconds : undefined, entry.record.ttlSeconds);
          if (ttl === "invalid")
            return fail(response, 400, "invalid_ttl", "ttlSeconds must be 1..2592000 or null");
          entry.record.ttlSeconds = ttl;
          // Processes do not survive; port and desktop tokens of the old generation die.
          entry.record.generation += 1;
          entry.desktopAsked = 0;
          touch(entry.record, "provisioning");
          background(entry, async () => {
            if (entry.containerId) await options.machines.start(entry.containerId);
            entry.record.archiveAfter = archiveAfterFor(entry.record.ttlSeconds, now());
            touch(entry.record, "idle");
          });
        }
        sendJson(response, 202, {
          ok: true,
          type: "sandbox.resuming",
          id,
          status: isUsable(entry.record.state) ? "ready" : "resuming",
          sandbox: view(entry.record),
        });
      },
    },
    {
      method: "DELETE",
      pattern: /^\/sandboxes\/([^/]+)$/,
      name: "delete",
      async handle(request, response, [, id = ""]) {
        const entry = lookup(response, id);
        if (!entry) return;
        if (request.headers["x-ascii-confirm-delete"] !== id) {
          return fail(
            response,
            409,
            "confirmation_required",
            "X-Ascii-Confirm-Delete must equal the sandbox id",
          );
        }
        const opId = `bdop_${randomBytes(16).toString("hex")}`;
        const done = removeEntry(entry);
        const operation: DeletionOperation = {
          id: opId,
          targetId: id,
          status: "pending",
          requestedAt: now(),
          completedAt: null,
          done,
        };
        operations.set(opId, operation);
        done.then(
          () => {
            operation.status = "completed";
            operation.completedAt = now();
          },
          () => {
            operation.status = "processing";
          },
        );
        sendJson(response, 202, { ok: true, type: "sandbox.deleting", operation: operationView(operation) });
      },
    },
    {
      method: "GET",
      pattern: /^\/deletion-operations\/([^/]+)$/,
      name: "deletion",
      async handle(_request, response, [, opId = ""]) {
        const operation = operations.get(opId);
        if (!operation) return fail(response, 404, "not_found", "deletion operation not found");
        // The purge is seen in progress at least once before it completes.
        if (operation.status === "pending") {
          const view = operationView(operation);
          operation.status = "processing";
          return sendJson(response, 200, { ok: true, type: "deletion.operation", operation: view });
        }
        if (operation.status === "processing") await operation.done.catch(() => undefined);
        sendJson(response, 200, {
          ok: true,
          type: "deletion.operation",
          operation: operationView(operation),
        });
      },
    },
    {
      method: "POST",
      pattern: /^\/sandboxes\/([^/]+)\/commands$/,
      name: "command",
      async handle(request, response, [, id = ""]) {
        const entry = lookup(response, id);
        if (!entry) return;
        const body = await readJson(request);
        if (!isRecord(body) || typeof body.command !== "string" || body.command.length === 0) {
          return fail(response, 400, "invalid_command", "command must be a non-empty string");
        }
        const timeoutSeconds = body.timeoutSeconds ?? 30;
        if (
          !Number.isInteger(timeoutSeconds) ||
          (timeoutSeconds as number) < 1 ||
          (timeoutSeconds as number) > 600
        ) {
          return fail(response, 400, "invalid_timeout", "timeoutSeconds must be an integer in 1-600");
        }
        const ready = await waitUsable(entry, 60_000);
        if (!ready.ok) return refuse(response, ready);
        const cwd = typeof body.cwd === "string" ? body.cwd : MACHINE_HOME;
        const containerId = containerOf(entry);
        if (body.stream === true) {
          response.writeHead(200, { "content-type": "application/x-ndjson" });
          const frame = (value: unknown) => response.write(`${JSON.stringify(value)}\n`);
          frame({ type: "started" });
          try {
            const result = await options.machines.exec(containerId, {
              command: body.command,
              cwd,
              timeoutMs: (timeoutSeconds as number) * 1000,
              onStdout: (chunk) => frame({ type: "stdout", data: chunk.toString("utf8") }),
              onStderr: (chunk) => frame({ type: "stderr", data: chunk.toString("utf8") }),
            });
            frame({
              type: "exit",
              success: result.exitCode === 0,
              exitCode: result.exitCode,
              timedOut: result.timedOut,
            });
          } catch (error) {
            frame({ type: "error", error: "boat_direct_failed", message: (error as Error).message });
          }
          response.end();
          return;
        }
        const result = await options.machines.exec(containerId, {
          command: body.command,
          cwd,
          timeoutMs: (timeoutSeconds as number) * 1000,
        });
        sendJson(response, 200, {
          ok: true,
          type: "command.result",
          success: result.exitCode === 0,
          exitCode: result.exitCode,
          stdout: result.stdout.toString("utf8"),
          stderr: result.stderr.toString("utf8"),
          timedOut: result.timedOut,
        });
      },
    },
    {
      method: "GET",
      pattern: /^\/sandboxes\/([^/]+)\/files$/,
      name: "readFile",
      async handle(_request, response, [, id = ""], url) {
        const entry = lookup(response, id);
        if (!entry) return;
        const ready = decideCommand(entry.record);
        if (ready === "wait" || !ready.ok) {
          return fail(response, 409, "sandbox_not_ready", `sandbox is ${entry.record.state}`);
        }
        const encoding = url.searchParams.get("encoding") ?? "utf8";
        if (encoding !== "utf8" && encoding !== "base64") {
          return fail(response, 400, "invalid_encoding", "encoding must be utf8 or base64");
        }
        const path = await resolvePath(containerOf(entry), url.searchParams.get("path") ?? "");
        if (!path) return fail(response, 400, "invalid_path", "path must resolve under /home/user or /tmp");
        const read = await options.machines.exec(containerOf(entry), {
          command: `test -f ${shellQuote(path)} || exit 44; cat -- ${shellQuote(path)}`,
        });
        if (read.exitCode === 44) return fail(response, 404, "file_not_found", `no file at ${path}`);
        if (read.exitCode !== 0)
          return fail(response, 500, "read_failed", read.stderr.toString().slice(0, 200));
        sendJson(response, 200, {
          ok: true,
          type: "file.read",
          success: true,
          path,
          encoding,
          size: read.stdout.length,
          content: read.stdout.toString(encoding === "base64" ? "base64" : "utf8"),
        });
      },
    },
    {
      method: "PUT",
      pattern: /^\/sandboxes\/([^/]+)\/files$/,
      name: "writeFile",
      async handle(request, response, [, id = ""]) {
        const entry = lookup(response, id);
        if (!entry) return;
        const ready = decideCommand(entry.record);
        if (ready === "wait" || !ready.ok) {
          return fail(response, 409, "sandbox_not_ready", `sandbox is ${entry.record.state}`);
        }
        const body = await readJson(request);
        if (!isRecord(body) || typeof body.path !== "string" || typeof body.content !== "string") {
          return fail(response, 400, "invalid_body", "path and content are required strings");
        }
        const encoding = body.encoding ?? "utf8";
        if (encoding !== "utf8" && encoding !== "base64") {
          return fail(response, 400, "invalid_encoding", "encoding must be utf8 or base64");
        }
        const path = await resolvePath(containerOf(entry), body.path);
        if (!path) return fail(response, 400, "invalid_path", "path must resolve under /home/user or /tmp");
        const bytes = Buffer.from(body.content, encoding === "base64" ? "base64" : "utf8");
        const quoted = shellQuote(path);
        const write = await options.machines.exec(containerOf(entry), {
          command: `mkdir -p -- "$(dirname -- ${quoted})" && tmp="$(mktemp -- ${quoted}.XXXXXX)" && cat > "$tmp" && mv -f -- "$tmp" ${quoted}`,
          stdin: bytes,
        });
        if (write.exitCode !== 0)
          return fail(response, 400, "write_failed", write.stderr.toString().slice(0, 200));
        sendJson(response, 200, {
          ok: true,
          type: "file.written",
          success: true,
          path,
          encoding,
          size: bytes.length,
        });
      },
    },
    {
      method: "POST",
      pattern: /^\/sandboxes\/([^/]+)\/host$/,
      name: "host",
      async handle(request, response, [, id = ""]) {
        const entry = lookup(response, id);
        if (!entry) return;
        const body = await readJson(request);
        const port = isRecord(body) ? body.port : undefined;
        if (!Number.isInteger(port) || (port as number) < 1 || (port as number) > 65535) {
          return fail(response, 400, "invalid_port", "port must be an integer 1-65535");
        }
        const publicAccess = isRecord(body) && body.public === true;
        const { url } = await hostPort(entry, port as number, publicAccess);
        sendJson(response, 200, {
          ok: true,
          type: "port.hosted",
          success: true,
          port,
          url,
          isProtected: !publicAccess,
          access: publicAccess ? "public" : "private",
        });
      },
    },
    {
      method: "POST",
      pattern: /^\/sandboxes\/([^/]+)\/desktop$/,
      name: "desktop",
      async handle(_request, response, [, id = ""]) {
        const entry = lookup(response, id);
        if (!entry) return;
        if (!isUsable(entry.record.state)) {
          return fail(response, 409, "sandbox_not_ready", `sandbox is ${entry.record.state}`);
        }
        // The first ask of a generation prepares VNC; the client polls again.
        entry.desktopAsked += 1;
        if (entry.desktopAsked === 1) {
          return sendJson(response, 200, {
            ok: true,
            type: "desktop.provisioning",
            provisioning: true,
            message: "Preparing VNC desktop…",
          });
        }
        const { url } = await hostPort(entry, 6080, false);
        sendJson(response, 200, {
          ok: true,
          type: "desktop.url",
          success: true,
          desktopUrl: url,
          ip: null,
          mode: "vnc",
        });
      },
    },
  ];

  const server = http.createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://boat.invalid");
    const path = url.pathname.replace(/^\/api\/v1/, "");
    response.on("finish", () =>
      requests.push({ method: request.method ?? "", path, status: response.statusCode }),
    );
    const auth = request.headers.authorization ?? "";
    if (!auth.startsWith("Bearer ") || !sameSecret(auth.slice(7), options.apiKey)) {
      request.resume();
      return fail(response, 401, "unauthorized", "Unauthorized");
    }
    const route = routes.find((r) => r.method === request.method && r.pattern.test(path));
    if (!route) {
      request.resume();
      return fail(response, 404, "not_found", `no route ${request.method} ${path}`);
    }
    if (rateLimited.count > 0) {
      rateLimited.count -= 1;
      request.resume();
      return fail(response, 429, "rate_limited", "machine start limit reached (minute window)", {
        "retry-after": String(rateLimited.retryAfterSeconds),
      });
    }
    const conflictsLeft = conflicts.get(route.name) ?? 0;
    if (conflictsLeft > 0) {
      conflicts.set(route.name, conflictsLeft - 1);
      request.resume();
      return fail(response, 409, "sandbox_busy", "another operation on this sandbox is in progress");
    }
    route.handle(request, response, path.match(route.pattern) ?? [], url).catch((error: unknown) => {
      if (response.headersSent) response.destroy();
      else fail(response, 500, "internal_error", error instanceof Error ? error.message : String(error));
    });
  });

  function operationView(operation: DeletionOperation) {
    return {
      id: operation.id,
      kind: "sandbox",
      targetId: operation.targetId,
      reason: "explicit",
      status: operation.status,
      stage: operation.status === "completed" ? "completed" : "removing",
      attemptCount: 1,
      requestedAt: iso(operation.requestedAt),
      completedAt: iso(operation.completedAt),
    };
  }

  const sweep = async () => {
    const lapsed: string[] = [];
    for (const entry of entries.values()) {
      if (ttlLapsed(entry.record, now())) {
        archive(entry);
        lapsed.push(entry.record.id);
      }
    }
    await Promise.all([...entries.values()].map((e) => e.pending));
    return lapsed;
  };
  const timer = options.sweepEveryMs ? setInterval(() => void sweep(), options.sweepEveryMs) : undefined;
  timer?.unref();

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/api/v1`,
    requests,
    faults: {
      conflict(route, count) {
        conflicts.set(route, count);
      },
      rateLimit(count, retryAfterSeconds) {
        rateLimited = { count, retryAfterSeconds };
      },
    },
    sweep,
    async setState(id, state, error) {
      const entry = entries.get(id);
      if (!entry) throw new Error(`no sandbox ${id}`);
      await entry.pending;
      await closeListeners(entry);
      if (entry.containerId) await options.machines.stop(entry.containerId);
      entry.record.error = error;
      touch(entry.record, state);
    },
    expireSnapshot(id) {
      const entry = entries.get(id);
      if (!entry) throw new Error(`no sandbox ${id}`);
      entry.record.snapshotAvailable = false;
    },
    async vanish(id) {
      const entry = entries.get(id);
      if (entry) await removeEntry(entry);
    },
    inspect(id) {
      const record = entries.get(id)?.record;
      return record ? { ...record } : undefined;
    },
    async settled() {
      await Promise.all([...entries.values()].map((e) => e.pending));
    },
    async close() {
      if (timer) clearInterval(timer);
      for (const entry of [...entries.values()]) await removeEntry(entry);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
