/**
 * `GET /metrics` and `GET /ready` on a Hono app (the API's own, the worker's small listener).
 *
 * `/metrics` answers a caller on this machine (socket peer on loopback and no forwarding
 * header, `isLocalClient`), or anyone presenting `RAKAZO_METRICS_TOKEN` as a bearer token:
 * only its SHA-256 is kept and each presented token is hashed and compared in constant time.
 * Anyone else gets 401 `UNAUTHENTICATED`. `/ready` says no more than ready or why not, and
 * answers everyone, like `/health`.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { Database } from "@rakazo/db";
import { isLocalClient } from "@rakazo/http-edge";
import type { Context, Hono } from "hono";
import { readiness } from "./readiness.ts";
import type { Metrics } from "./registry.ts";

export interface OperatorRoutesOptions {
  readonly db: Database;
  readonly metrics: Metrics;
  /** `RAKAZO_METRICS_TOKEN`: lets a scraper on another machine (or container) in. */
  readonly token?: string | undefined;
}

const sha256 = (secret: string): Buffer => createHash("sha256").update(secret).digest();

export function mountOperatorRoutes(app: Hono, options: OperatorRoutesOptions): void {
  const tokenHash = options.token ? sha256(options.token) : undefined;
  const allowed = (c: Context): boolean => {
    if (isLocalClient(c)) return true;
    const presented = /^Bearer\s+(\S+)\s*$/i.exec(c.req.header("authorization") ?? "")?.[1];
    return tokenHash !== undefined && timingSafeEqual(sha256(presented ?? ""), tokenHash);
  };

  app.get("/metrics", async (c) => {
    if (!allowed(c)) {
      const message =
        "metrics answer this machine, or a caller with RAKAZO_METRICS_TOKEN as its bearer token";
      return c.json({ error: { code: "UNAUTHENTICATED", message } }, 401);
    }
    const { registry } = options.metrics;
    return c.body(await registry.metrics(), 200, { "content-type": registry.contentType });
  });

  app.get("/ready", async (c) => {
    const state = await readiness(options.db);
    if (state.ready) return c.json({ status: "ready" });
    return c.json({ status: "not_ready", reason: state.reason, message: state.message }, 503);
  });
}
