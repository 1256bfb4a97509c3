/**
 * `POST /internal/screens/authorize` — the screen authority the web service asks (SCR-5/6).
 * Protected by the service token shared by web and API (compared in constant time); never
 * reachable with a user's API token. The body is `{capability}`; the answer is the gateway
 * target and ticket, or `403 {error:{code:"FORBIDDEN", details:{reason}}}`.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { AppError, authorizeScreen, type ServiceContext } from "@rakazo/services";
import type { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";

function sameSecret(a: string, b: string): boolean {
  const ha = createHash("sha256").update(a).digest();
  const hb = createHash("sha256").update(b).digest();
  return timingSafeEqual(ha, hb);
}

export function mountScreenAuthority(app: Hono, ctx: ServiceContext, serviceToken: string): void {
  app.post("/internal/screens/authorize", bodyLimit({ maxSize: 8192 }), async (c) => {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(c.req.header("authorization") ?? "");
    if (!match?.[1] || !sameSecret(match[1], serviceToken)) {
      throw new AppError("UNAUTHENTICATED", "the screen authority needs the service token");
    }
    let body: unknown;
    try {
      body = await c.req.json();
    } catch {
      throw new AppError("INVALID_JSON", "request body is not valid JSON");
    }
    const capability = (body as { capability?: unknown })?.capability;
    if (typeof capability !== "string" || capability.length === 0 || capability.length > 2048) {
      throw new AppError("INVALID_INPUT", "capability must be a string");
    }
    c.header("cache-control", "no-store");
    return c.json({ result: await authorizeScreen(ctx, { capability }) });
  });
}
