/**
 * Daytona's control plane under `/api` (bearer key): create, list by labels and states, get,
 * delete (→ `destroyed`: GET still shows it, list does not), stop, start (resets every standard
 * preview token), activity, auto-stop/archive/delete intervals, TTL, labels, and preview links —
 * private unless the sandbox is public, admitting only `x-daytona-preview-token` (stripped
 * before the port) and only while the sandbox is started.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { callerGone, isRecord, readJson, sameSecret, sendEmpty, sendJson } from "../http-util.ts";
import { startPortListener } from "../port-proxy.ts";
import { type Call, type Handler, notEmulated, type Router } from "../router.ts";
import {
  type Daytona,
  destroySandbox,
  dto,
  fail,
  find,
  idParam,
  type Sandbox,
  setState,
  stopSandbox,
} from "./state.ts";

const PREVIEW_HEADER = "x-daytona-preview-token";

async function previewLink(daytona: Daytona, s: Sandbox, port: number) {
  let grant = s.previewTokens.get(port);
  if (!grant || grant.generation !== s.generation) {
    grant = { token: randomBytes(24).toString("base64url"), generation: s.generation };
    s.previewTokens.set(port, grant);
  }
  let listener = s.listeners.get(port);
  if (!listener) {
    listener = await startPortListener({
      connect: () => daytona.machines.connectPort(s.containerId, port),
      admit: (request) => {
        const path = request.url ?? "/";
        const given = request.headers[PREVIEW_HEADER];
        const current = s.previewTokens.get(port);
        if (
          !s.public &&
          (typeof given !== "string" ||
            !current ||
            current.generation !== s.generation ||
            !sameSecret(given, current.token))
        ) {
          return { ok: false, status: 401 };
        }
        // Checked per request, not at connect: a pinned stream must not outlive a stop.
        if (s.state !== "started") return { ok: false, status: 502 };
        return { ok: true, path };
      },
      stripHeaders: [PREVIEW_HEADER],
    });
    s.listeners.set(port, listener);
  }
  return { sandboxId: s.id, url: listener.url, token: grant.token };
}

export function sandboxRoutes(router: Router, daytona: Daytona): void {
  /**
   * The guard of `/sandbox/:id/…`: the sandbox by id or name (404 when unknown) counts the call
   * as activity; only `readable` routes answer for a destroyed one.
   */
  const onSandbox =
    <P extends string>(
      handle: (s: Sandbox, call: Call<P>) => Promise<void> | void,
      readable = false,
    ): Handler<P> =>
    (call) => {
      const id = idParam(call);
      const s = find(daytona, id);
      if (!s) return fail(call.response, 404, `Sandbox with ID or name ${id} not found`, "NOT_FOUND");
      s.lastActivity = daytona.now();
      if (!readable && s.state === "destroyed")
        return fail(call.response, 404, `Sandbox ${s.id} is destroyed`, "NOT_FOUND");
      return handle(s, call);
    };

  router.on("POST", "/sandbox", async ({ request, response }) => {
    const body = await readJson(request);
    if (!isRecord(body)) return fail(response, 400, "body must be an object");
    const now = daytona.now;
    const id = randomUUID();
    const name = typeof body.name === "string" && body.name !== "" ? body.name : id;
    if (find(daytona, name)) return fail(response, 409, `sandbox named ${name} exists`);
    const ttl = typeof body.ttlMinutes === "number" && body.ttlMinutes > 0 ? body.ttlMinutes : null;
    const containerId = await daytona.machines.create(
      `dt-${id.slice(0, 12)}`,
      typeof body.snapshot === "string" ? body.snapshot : undefined,
    );
    // A caller that gave up (timed out, disconnected) never learns the id: leave no machine.
    if (callerGone(response)) {
      await daytona.machines.remove(containerId).catch(() => undefined);
      return;
    }
    const sandbox: Sandbox = {
      id,
      name,
      state: "started",
      labels: isRecord(body.labels) ? (body.labels as Record<string, string>) : {},
      env: isRecord(body.env) ? (body.env as Record<string, string>) : {},
      public: body.public === true,
      containerId,
      autoStopInterval: typeof body.autoStopInterval === "number" ? body.autoStopInterval : 15,
      autoArchiveInterval: typeof body.autoArchiveInterval === "number" ? body.autoArchiveInterval : 10080,
      autoDeleteInterval: typeof body.autoDeleteInterval === "number" ? body.autoDeleteInterval : -1,
      destroyAt: ttl === null ? null : now() + ttl * 60_000,
      lastActivity: now(),
      createdAt: now(),
      generation: 1,
      previewTokens: new Map(),
      listeners: new Map(),
      sessions: new Map(),
      errorReason: null,
    };
    daytona.sandboxes.set(id, sandbox);
    daytona.emit("sandbox.created", dto(daytona, sandbox));
    sendJson(response, 200, dto(daytona, sandbox));
  });

  router.on("GET", "/sandbox", ({ response, url }) => {
    const labels = url.searchParams.get("labels");
    let wanted: Record<string, string> = {};
    try {
      wanted = labels ? (JSON.parse(labels) as Record<string, string>) : {};
    } catch {
      return fail(response, 400, "labels must be JSON");
    }
    const states = url.searchParams.getAll("states");
    const items = [...daytona.sandboxes.values()].filter(
      (s) =>
        s.state !== "destroyed" &&
        (states.length === 0 || states.includes(s.state)) &&
        Object.entries(wanted).every(([k, v]) => s.labels[k] === v),
    );
    sendJson(response, 200, {
      items: items.map((s) => dto(daytona, s)),
      total: items.length,
      nextCursor: null,
    });
  });

  router.on(
    "GET",
    "/sandbox/:id",
    onSandbox((s, { response }) => sendJson(response, 200, dto(daytona, s)), true),
  );

  router.on(
    "GET",
    "/sandbox/:id/toolbox-proxy-url",
    onSandbox((_s, { response }) => sendJson(response, 200, { url: `${daytona.origin}/toolbox` }), true),
  );

  router.on(
    "DELETE",
    "/sandbox/:id",
    onSandbox(async (s, { response }) => {
      await destroySandbox(daytona, s);
      sendJson(response, 200, dto(daytona, s));
    }),
  );

  router.on(
    "POST",
    "/sandbox/:id/stop",
    onSandbox(async (s, { response }) => {
      if (s.state === "started") await stopSandbox(daytona, s);
      sendJson(response, 200, dto(daytona, s));
    }),
  );

  router.on(
    "POST",
    "/sandbox/:id/start",
    onSandbox(async (s, { response }) => {
      if (s.state === "stopped") {
        setState(daytona, s, "starting");
        await daytona.machines.start(s.containerId);
        s.generation += 1;
        s.sessions.clear();
        setState(daytona, s, "started");
      }
      sendJson(response, 200, dto(daytona, s));
    }),
  );

  router.on(
    "POST",
    "/sandbox/:id/last-activity",
    onSandbox((_s, { response }) => sendEmpty(response, 201)),
  );

  for (const kind of ["autostop", "autoarchive", "autodelete", "autopause"] as const) {
    router.on(
      "POST",
      `/sandbox/:id/${kind}/:minutes`,
      onSandbox((s, { request, response, url, params }) => {
        if (!/^-?\d+$/.test(params.minutes))
          return fail(response, 404, notEmulated(request.method, url.pathname));
        const minutes = Number(params.minutes);
        if (kind === "autostop") s.autoStopInterval = minutes;
        if (kind === "autoarchive") s.autoArchiveInterval = minutes;
        if (kind === "autodelete") s.autoDeleteInterval = minutes;
        sendEmpty(response, 200);
      }),
    );
  }

  router.on(
    "POST",
    "/sandbox/:id/ttl/:minutes",
    onSandbox((s, { request, response, url, params }) => {
      if (!/^\d+$/.test(params.minutes))
        return fail(response, 404, notEmulated(request.method, url.pathname));
      const minutes = Number(params.minutes);
      s.destroyAt = minutes === 0 ? null : daytona.now() + minutes * 60_000;
      sendEmpty(response, 200);
    }),
  );

  router.on(
    "PUT",
    "/sandbox/:id/labels",
    onSandbox(async (s, { request, response }) => {
      const body = await readJson(request);
      if (!isRecord(body) || !isRecord(body.labels)) return fail(response, 400, "labels required");
      s.labels = body.labels as Record<string, string>;
      sendJson(response, 200, { labels: s.labels });
    }),
  );

  router.on(
    "GET",
    "/sandbox/:id/ports/:port/preview-url",
    onSandbox(async (s, { request, response, url, params }) => {
      if (!/^\d+$/.test(params.port)) return fail(response, 404, notEmulated(request.method, url.pathname));
      const port = Number(params.port);
      if (port < 3000 || port > 9999) return fail(response, 400, "port must be 3000-9999");
      if (s.state !== "started") return fail(response, 409, `sandbox is ${s.state}`);
      sendJson(response, 200, await previewLink(daytona, s, port));
    }),
  );
}
