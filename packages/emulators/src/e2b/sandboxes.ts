/**
 * The control plane (`X-API-KEY`): create, list by metadata and state, get, connect/resume,
 * pause, set timeout, kill — with the services' status codes. E2B creates under `/v2`, Novita
 * without; both list and connect under either.
 */
import { randomBytes } from "node:crypto";
import { callerGone, sendEmpty, sendJson } from "../http-util.ts";
import type { Router } from "../router.ts";
import {
  ApiError,
  type E2BState,
  type EmulatedSandbox,
  ENVD_VERSION,
  found,
  kill,
  newToken,
  pause,
  schedule,
} from "./state.ts";

/** What the server adds to a control-plane call: its JSON body (`{}` when none). */
export interface ControlCall {
  readonly body: Record<string, unknown>;
}

/** Decodes the SDK's metadata filter: `key=value` pairs joined by `&`, then URL-encoded again. */
export function decodeMetadataQuery(value: string | null): Record<string, string> {
  const out: Record<string, string> = {};
  if (!value) return out;
  for (const [key, v] of new URLSearchParams(value)) out[decodeURIComponent(key)] = decodeURIComponent(v);
  return out;
}

function newId(): string {
  return `i${randomBytes(10).toString("hex")}`;
}

function detail(state: E2BState, sbx: EmulatedSandbox) {
  return {
    sandboxID: sbx.id,
    templateID: sbx.templateId,
    clientID: "emulator",
    metadata: sbx.metadata,
    startedAt: sbx.startedAt.toISOString(),
    endAt: sbx.endAt.toISOString(),
    state: sbx.state,
    cpuCount: 2,
    memoryMB: 2048,
    diskSizeMB: 10240,
    envdVersion: ENVD_VERSION,
    domain: state.domain,
  };
}

function connectAnswer(state: E2BState, sbx: EmulatedSandbox) {
  return {
    sandboxID: sbx.id,
    templateID: sbx.templateId,
    clientID: "emulator",
    envdVersion: ENVD_VERSION,
    envdAccessToken: sbx.envdAccessToken,
    ...(sbx.trafficAccessToken ? { trafficAccessToken: sbx.trafficAccessToken } : {}),
    domain: state.domain,
  };
}

export function sandboxRoutes(router: Router<ControlCall>, state: E2BState): void {
  router.on("POST", state.flavor === "e2b" ? "/v2/sandboxes" : "/sandboxes", async ({ response, body }) => {
    if (state.sandboxes.size >= state.maxSandboxes) {
      throw new ApiError(
        429,
        `You have reached the maximum number of concurrent sandboxes (${state.maxSandboxes})`,
      );
    }
    // The machines have no network at all; the service's default (absent) is accepted as that.
    if (body.allow_internet_access === true) {
      throw new ApiError(
        400,
        "allow_internet_access: true is not emulated: emulated sandboxes have no network (send false)",
      );
    }
    const network = (body.network ?? {}) as { allowPublicTraffic?: boolean; allowOut?: unknown };
    if (Array.isArray(network.allowOut) && network.allowOut.length > 0) {
      throw new ApiError(400, "network.allowOut is not emulated: emulated sandboxes have no network");
    }
    const templateId = String(body.templateID ?? "base");
    const timeout = typeof body.timeout === "number" ? body.timeout : 300;
    const id = newId();
    const envs = (body.envVars ?? {}) as Record<string, string>;
    const containerId = await state.containers.create(id, envs, templateId);
    // A caller that gave up (timed out, aborted) never learns the id: leave no machine.
    if (callerGone(response)) {
      await state.containers.remove(containerId).catch(() => undefined);
      return;
    }
    const sbx: EmulatedSandbox = {
      id,
      templateId,
      containerId,
      metadata: (body.metadata ?? {}) as Record<string, string>,
      startedAt: new Date(),
      endAt: new Date(Date.now() + timeout * 1000),
      state: "running",
      envdAccessToken: newToken(),
      trafficAccessToken: network.allowPublicTraffic === false ? newToken() : undefined,
      autoPause: body.autoPause === true,
      processes: new Map(),
    };
    state.sandboxes.set(id, sbx);
    schedule(state, sbx);
    sendJson(response, 201, connectAnswer(state, sbx));
  });

  for (const base of ["/v2/sandboxes", "/sandboxes"] as const) {
    router.on("GET", base, ({ response, url }) => {
      const wanted = decodeMetadataQuery(url.searchParams.get("metadata"));
      const states = (url.searchParams.get("state") ?? "running,paused").split(",");
      const list = [...state.sandboxes.values()]
        .filter((s) => states.includes(s.state))
        .filter((s) => Object.entries(wanted).every(([k, v]) => s.metadata[k] === v))
        .map((s) => detail(state, s));
      sendJson(response, 200, list);
    });

    router.on("POST", `${base}/:id/connect`, async ({ response, params, body }) => {
      const sbx = found(state, params.id);
      const timeout = typeof body.timeout === "number" ? body.timeout : 300;
      const wanted = new Date(Date.now() + timeout * 1000);
      if (sbx.state === "paused") {
        await state.containers.unpause(sbx.containerId);
        sbx.state = "running";
        // The envd token is the sandbox's for its whole life, as the service keeps it: the SDK's
        // `sbx.connect()` discards the answer and goes on with the token from create.
        sbx.endAt = wanted;
        schedule(state, sbx);
        return sendJson(response, 201, connectAnswer(state, sbx));
      }
      // Running: E2B only extends the TTL; Novita sets it to what the SDK sent.
      sbx.endAt = state.flavor === "e2b" && sbx.endAt > wanted ? sbx.endAt : wanted;
      schedule(state, sbx);
      sendJson(response, 200, connectAnswer(state, sbx));
    });
  }

  router.on("GET", "/sandboxes/:id", ({ response, params }) => {
    sendJson(response, 200, detail(state, found(state, params.id)));
  });

  router.on("DELETE", "/sandboxes/:id", async ({ response, params }) => {
    found(state, params.id);
    await kill(state, params.id);
    sendEmpty(response, 204);
  });

  router.on("POST", "/sandboxes/:id/pause", async ({ response, params }) => {
    const sbx = found(state, params.id);
    if (sbx.state === "paused") throw new ApiError(409, `sandbox "${sbx.id}" is already paused`);
    await pause(state, sbx);
    sendEmpty(response, 204);
  });

  router.on("POST", "/sandboxes/:id/timeout", ({ response, params, body }) => {
    const sbx = found(state, params.id);
    if (typeof body.timeout !== "number") throw new ApiError(400, "timeout must be a number");
    sbx.endAt = new Date(Date.now() + body.timeout * 1000);
    schedule(state, sbx);
    sendEmpty(response, 204);
  });
}
