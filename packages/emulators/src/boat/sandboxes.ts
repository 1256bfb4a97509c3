/**
 * Boat's sandbox lifecycle routes: 202 create with `Idempotency-Key` (same key and body → same
 * sandbox, a key still minting → 409 `idempotency_in_progress`, another body → 409
 * `idempotency_key_reused`); list with cursor paging; get (`cancelled` is shown once, then 404);
 * update name and TTL; stop → `archiving` → `archived`; resume → `provisioning` → `idle` with a
 * new token generation; delete behind `X-Ascii-Confirm-Delete: <id>`, answered with a deletion
 * operation to poll.
 */
import { createHash, randomBytes } from "node:crypto";
import { isRecord, readJson, sendJson } from "../http-util.ts";
import type { Router } from "../router.ts";
import {
  archiveAfterFor,
  type BoatRecord,
  decideResume,
  decideStop,
  isUsable,
  parseTtl,
} from "./lifecycle.ts";
import {
  archive,
  type Boat,
  background,
  closeListeners,
  type DeletionOperation,
  type Entry,
  fail,
  iso,
  onEntry,
  refuse,
  removeEntry,
  touch,
  view,
} from "./state.ts";

const ID_ALPHABET = "23456789abcdefghjkmnpqrstuvwxyz";
const WORDS = ["frazil", "pneuma", "rallye", "otter", "swift", "harbor", "keel", "mast", "tide", "buoy"];

function boatId(): string {
  const bytes = randomBytes(8);
  return `bx_${Array.from(bytes, (b) => ID_ALPHABET[b % ID_ALPHABET.length]).join("")}`;
}

function word(): string {
  return WORDS[(randomBytes(1)[0] ?? 0) % WORDS.length] ?? "boat";
}

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

export function sandboxRoutes(router: Router, boat: Boat): void {
  router.on(
    "POST",
    "/sandboxes",
    async ({ request, response }) => {
      const body = await readJson(request);
      if (!isRecord(body)) return fail(response, 400, "invalid_json", "Request body must be a JSON object.");
      const ttl = parseTtl(body.ttlSeconds, 3600);
      if (ttl === "invalid")
        return fail(response, 400, "invalid_ttl", "ttlSeconds must be 1..2592000 or null");
      const key = request.headers["idempotency-key"];
      const bodyHash = createHash("sha256").update(JSON.stringify(body)).digest("hex");
      if (typeof key === "string") {
        const seen = boat.idempotency.get(key);
        if (seen && seen.bodyHash !== bodyHash) {
          return fail(response, 409, "idempotency_key_reused", "Idempotency-Key was used with another body");
        }
        if (seen && seen.sandboxId === null) {
          return fail(response, 409, "idempotency_in_progress", "a create with this key is still minting");
        }
        const existing = seen?.sandboxId ? boat.entries.get(seen.sandboxId) : undefined;
        if (existing) {
          return sendJson(response, 202, {
            ok: true,
            type: "sandbox.created",
            status: isUsable(existing.record.state) ? "ready" : "provisioning",
            ttlSeconds: existing.record.ttlSeconds,
            sandbox: view(existing.record),
          });
        }
        boat.idempotency.set(key, { bodyHash, sandboxId: null });
      }
      const at = boat.now();
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
      boat.entries.set(id, entry);
      if (typeof key === "string") boat.idempotency.set(key, { bodyHash, sandboxId: id });
      background(boat, entry, async () => {
        entry.containerId = await boat.machines.create(
          id.replace("_", "-"),
          typeof body.type === "string" ? body.type : undefined,
        );
        if (boat.entries.has(id)) touch(boat, record, "idle");
      });
      sendJson(response, 202, {
        ok: true,
        type: "sandbox.created",
        status: "provisioning",
        ttlSeconds: ttl,
        sandbox: view(record),
      });
    },
    "create",
  );

  router.on(
    "GET",
    "/sandboxes",
    ({ response, url }) => {
      const limit = Math.min(Number(url.searchParams.get("limit") ?? 100) || 100, 200);
      const states = url.searchParams.get("state")?.split(",").filter(Boolean);
      const all = [...boat.entries.values()]
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
    "list",
  );

  router.on(
    "GET",
    "/sandboxes/:id",
    onEntry(boat, async (entry, id, { response }) => {
      sendJson(response, 200, { ok: true, type: "sandbox.info", sandbox: view(entry.record) });
      // Cancelled is reported once, then the sandbox is not found (404, not 410).
      if (entry.record.state === "cancelled") {
        boat.entries.delete(id);
        await closeListeners(entry);
        if (entry.containerId) await boat.machines.remove(entry.containerId);
      }
    }),
    "get",
  );

  router.on(
    "PATCH",
    "/sandboxes/:id",
    onEntry(boat, async (entry, _id, { request, response }) => {
      const body = await readJson(request);
      if (!isRecord(body)) return fail(response, 400, "invalid_json", "Request body must be a JSON object.");
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
        if (isUsable(entry.record.state)) entry.record.archiveAfter = archiveAfterFor(ttl, boat.now());
      }
      touch(boat, entry.record);
      sendJson(response, 200, { ok: true, type: "sandbox.updated", sandbox: view(entry.record) });
    }),
    "update",
  );

  router.on(
    "POST",
    "/sandboxes/:id/stop",
    onEntry(boat, (entry, id, { response }) => {
      const decision = decideStop(entry.record);
      if (!decision.ok) return refuse(response, decision);
      if (isUsable(entry.record.state)) archive(boat, entry);
      sendJson(response, 202, {
        ok: true,
        type: "sandbox.stopping",
        id,
        status: "archiving",
        sandbox: view(entry.record),
      });
    }),
    "stop",
  );

  router.on(
    "POST",
    "/sandboxes/:id/resume",
    onEntry(boat, async (entry, id, { request, response }) => {
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
        touch(boat, entry.record, "provisioning");
        background(boat, entry, async () => {
          if (entry.containerId) await boat.machines.start(entry.containerId);
          entry.record.archiveAfter = archiveAfterFor(entry.record.ttlSeconds, boat.now());
          touch(boat, entry.record, "idle");
        });
      }
      sendJson(response, 202, {
        ok: true,
        type: "sandbox.resuming",
        id,
        status: isUsable(entry.record.state) ? "ready" : "resuming",
        sandbox: view(entry.record),
      });
    }),
    "resume",
  );

  router.on(
    "DELETE",
    "/sandboxes/:id",
    onEntry(boat, (entry, id, { request, response }) => {
      if (request.headers["x-ascii-confirm-delete"] !== id) {
        return fail(
          response,
          409,
          "confirmation_required",
          "X-Ascii-Confirm-Delete must equal the sandbox id",
        );
      }
      const opId = `bdop_${randomBytes(16).toString("hex")}`;
      const done = removeEntry(boat, entry);
      const operation: DeletionOperation = {
        id: opId,
        targetId: id,
        status: "pending",
        requestedAt: boat.now(),
        completedAt: null,
        done,
      };
      boat.operations.set(opId, operation);
      done.then(
        () => {
          operation.status = "completed";
          operation.completedAt = boat.now();
        },
        () => {
          operation.status = "processing";
        },
      );
      sendJson(response, 202, { ok: true, type: "sandbox.deleting", operation: operationView(operation) });
    }),
    "delete",
  );

  router.on(
    "GET",
    "/deletion-operations/:operation",
    async ({ response, params }) => {
      const operation = boat.operations.get(params.operation);
      if (!operation) return fail(response, 404, "not_found", "deletion operation not found");
      // The purge is seen in progress at least once before it completes.
      if (operation.status === "pending") {
        const seen = operationView(operation);
        operation.status = "processing";
        return sendJson(response, 200, { ok: true, type: "deletion.operation", operation: seen });
      }
      if (operation.status === "processing") await operation.done.catch(() => undefined);
      sendJson(response, 200, { ok: true, type: "deletion.operation", operation: operationView(operation) });
    },
    "deletion",
  );
}
