/**
 * The web service's HTTP half (SCR-4..SCR-7): the noVNC page per capability (after the
 * authority and the gateway said yes), the embed page, and the bundled viewer script. Every
 * response carries `Cache-Control: no-transform`; the access log has the route, never the path.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import {
  allowHosts,
  bodyTooLarge,
  hostnamesOf,
  isBodyTooLarge,
  limitBody,
  requireJsonBody,
} from "@rakazo/http-edge";
import type { Logger } from "@rakazo/log";
import { MAX_ATTACHMENT_BYTES } from "@rakazo/protocol";
import { type Context, Hono } from "hono";
import type { ScreenAuthority } from "./authority.ts";
import { FAVICON_SVG } from "./favicon.ts";
import { embedPage, refusalPage, rootPage, screenPage, terminalPage } from "./pages.ts";
import { newConnectionId } from "./proxy.ts";
import { injectReporter } from "./reporter.ts";
import { mountSessions } from "./session.ts";
import { APP_CSP, type AppFiles } from "./static.ts";
import { gatewayStatus } from "./upstream.ts";

const XTERM_CSS = readFileSync(createRequire(import.meta.url).resolve("@xterm/xterm/css/xterm.css"), "utf8");
const CAPABILITY = /^rs1\.[A-Za-z0-9_-]{1,32}\.[A-Za-z0-9_-]{20,2000}$/;
/** Sign-in, setup, sign-out and anything unrouted: what a stranger may send (a few KiB). */
const PRE_AUTH_BODY_BYTES = 16 * 1024;
/** A signed-in RPC, as the API takes it; an upload as its base64 JSON (the API's own caps). */
const RPC_BODY_BYTES = 16 * 1024 * 1024;
const UPLOAD_BODY_BYTES = Math.ceil(MAX_ATTACHMENT_BYTES / 3) * 4 + 64 * 1024;

function bodyLimitFor(c: Context): number {
  if (c.req.path === "/api/rpc/computer/files/upload") return UPLOAD_BODY_BYTES;
  return c.req.path.startsWith("/api/rpc/") ? RPC_BODY_BYTES : PRE_AUTH_BODY_BYTES;
}

export interface WebAppOptions {
  readonly authority: ScreenAuthority;
  readonly log: Logger;
  /** The bundled noVNC page script. */
  readonly screenScript: string;
  /** The bundled terminal page script (xterm.js, TRM-4); no terminal routes without it. */
  readonly terminalScript?: string;
  /** The project's README, served at /docs/README.md when known. */
  readonly readme?: string | undefined;
  /** The API the web app's sessions call for the person; without it no app is served. */
  readonly apiUrl?: string | undefined;
  /** The web service as browsers reach it (WEB_PUBLIC_URL), for the sessions' cookie and origin. */
  readonly publicUrl?: string | undefined;
  /** This service's own secret (SCREEN_SERVICE_TOKEN): session cookies are sealed with it. */
  readonly sessionSecret?: string | undefined;
  /** The web app's production build (`vite build`), when built. */
  readonly appFiles?: AppFiles | undefined;
  /** Host names served besides loopback ones and `publicUrl`'s (`RAKAZO_ALLOWED_HOSTS`). */
  readonly allowedHosts?: readonly string[];
}

export function createWebApp(options: WebAppOptions): Hono {
  const { authority, log } = options;
  const app = new Hono();

  app.use("*", async (c, next) => {
    const started = performance.now();
    await next();
    const cache = c.res.headers.get("cache-control");
    c.res.headers.set("cache-control", cache ? `${cache}, no-transform` : "no-store, no-transform");
    c.res.headers.set("referrer-policy", "no-referrer");
    c.res.headers.set("x-content-type-options", "nosniff");
    // The route pattern only: paths hold capabilities.
    log.info("http.request", {
      method: c.req.method,
      route: c.req.routePath,
      status: c.res.status,
      durationMs: Math.round(performance.now() - started),
    });
  });

  // Before any route: the Host a browser used (DNS rebinding), then the body's size from its
  // headers; the session routes read a body only after their own checks, within this cap.
  app.use("*", allowHosts([...(options.allowedHosts ?? []), ...hostnamesOf([options.publicUrl])]));
  app.use("*", limitBody(bodyLimitFor));
  app.use("/auth/*", requireJsonBody());
  app.use("/api/*", requireJsonBody());
  app.onError((error, c) => {
    if (isBodyTooLarge(error)) return bodyTooLarge(bodyLimitFor(c));
    log.error("http.unhandled_error", { route: c.req.routePath, error });
    return c.json({ error: { code: "INTERNAL", message: "internal error" } }, 500);
  });

  app.get("/health", (c) => c.json({ status: "ok" }));
  for (const icon of ["/favicon.svg", "/favicon.ico"]) {
    app.get(icon, (c) => {
      c.header("content-type", "image/svg+xml");
      c.header("cache-control", "public, max-age=86400");
      return c.body(FAVICON_SVG);
    });
  }

  const appFiles = options.apiUrl !== undefined ? options.appFiles : undefined;
  if (options.apiUrl !== undefined)
    mountSessions(app, {
      apiUrl: options.apiUrl,
      publicUrl: options.publicUrl,
      secret: options.sessionSecret,
      log,
    });
  if (appFiles) {
    app.get("/", (c) => {
      c.header("content-security-policy", APP_CSP);
      c.header("x-frame-options", "DENY");
      return c.html(appFiles.index);
    });
    app.get("/app/:file", (c) => {
      const asset = appFiles.assets.get(c.req.path);
      if (!asset) return c.text("not found", 404);
      c.header("content-type", asset.type);
      // Hashed names: a new build is a new URL.
      c.header("cache-control", "public, max-age=31536000, immutable");
      return c.body(asset.body as Uint8Array<ArrayBuffer>);
    });
  } else {
    app.get("/", (c) => c.html(rootPage(options.readme !== undefined, options.apiUrl !== undefined)));
  }
  const readme = options.readme;
  if (readme !== undefined) {
    app.get("/docs/README.md", (c) => {
      c.header("content-type", "text/markdown; charset=utf-8");
      return c.body(readme);
    });
  }

  app.get("/assets/screen.js", (c) => {
    c.header("content-type", "text/javascript; charset=utf-8");
    c.header("cache-control", "public, max-age=300");
    // The screen page runs sandboxed in an opaque origin (Origin: null); its module script is a
    // CORS fetch. The bundle is public code, never a secret.
    c.header("access-control-allow-origin", "*");
    return c.body(options.screenScript);
  });

  app.get("/embed/:capability{.+}", (c) => {
    c.header(
      "content-security-policy",
      "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; frame-src 'self'",
    );
    return c.html(embedPage());
  });

  app.get("/screens/:capability/", async (c) => {
    const id = newConnectionId();
    const capability = c.req.param("capability");
    if (!CAPABILITY.test(capability)) {
      log.warn("screen.proxy.target_rejected", {
        "screen.connection_id": id,
        "screen.policy": null,
        "screen.reason": "invalid_path",
        "screen.transport": "http",
      });
      return c.html(refusalPage(), 404);
    }
    const authorization = await authority.authorize(capability);
    if (!authorization.ok) {
      log.warn("screen.proxy.target_rejected", {
        "screen.connection_id": id,
        "screen.policy": null,
        "screen.reason": authorization.reason,
        "screen.authority_reason": authorization.detail ?? null,
        "screen.transport": "http",
      });
      return c.html(refusalPage(), authorization.reason === "authority_rejected" ? 403 : 502);
    }
    if (authorization.policy === "terminal") {
      // A terminal capability opens the terminal page only (TRM-4).
      log.warn("screen.proxy.target_rejected", {
        "screen.connection_id": id,
        "screen.policy": authorization.policy,
        "screen.reason": "wrong_policy",
        "screen.transport": "http",
      });
      return c.html(refusalPage(), 403);
    }
    const base = { "screen.connection_id": id, "screen.policy": authorization.policy };
    let status: number;
    try {
      status = await gatewayStatus(authorization.target, authorization.ticket);
    } catch (error) {
      log.warn("screen.proxy.http_failed", {
        ...base,
        "screen.error": (error as NodeJS.ErrnoException).code ?? "error",
      });
      return c.html(refusalPage(), 502);
    }
    log.info("screen.proxy.http_upstream_response", { ...base, "screen.status": status });
    if (status !== 200)
      return c.html(refusalPage(), status === 410 ? 410 : status === 401 || status === 403 ? 403 : 502);
    // Sandboxed by its own response, however it is loaded: scripts run, but in an opaque
    // origin that cannot reach the embedding page or the web service's storage.
    c.header("content-security-policy", "sandbox allow-scripts");
    return c.html(injectReporter(screenPage(authorization.policy)));
  });

  const terminalScript = options.terminalScript;
  if (terminalScript !== undefined) {
    app.get("/assets/terminal.js", (c) => {
      c.header("content-type", "text/javascript; charset=utf-8");
      c.header("cache-control", "public, max-age=300");
      c.header("access-control-allow-origin", "*");
      return c.body(terminalScript);
    });
    app.get("/assets/xterm.css", (c) => {
      c.header("content-type", "text/css; charset=utf-8");
      c.header("cache-control", "public, max-age=300");
      c.header("access-control-allow-origin", "*");
      return c.body(XTERM_CSS);
    });
  }

  // TRM-4: the terminal page for a `terminal` capability only (the websocket is proxy.ts's).
  app.get("/terminals/:capability/", async (c) => {
    const id = newConnectionId();
    const capability = c.req.param("capability");
    const reject = (reason: string, status: 403 | 404 | 410 | 502, detail: Record<string, unknown> = {}) => {
      log.warn("screen.proxy.target_rejected", {
        "screen.connection_id": id,
        "screen.policy": null,
        "screen.reason": reason,
        "screen.transport": "http",
        ...detail,
      });
      return c.html(refusalPage(), status);
    };
    if (terminalScript === undefined || !CAPABILITY.test(capability)) return reject("invalid_path", 404);
    const authorization = await authority.authorize(capability);
    if (!authorization.ok) {
      return reject(authorization.reason, authorization.reason === "authority_rejected" ? 403 : 502, {
        "screen.authority_reason": authorization.detail ?? null,
      });
    }
    if (authorization.policy !== "terminal") return reject("wrong_policy", 403);
    let status: number;
    try {
      status = await gatewayStatus(authorization.target, authorization.ticket);
    } catch {
      return reject("authority_unavailable", 502);
    }
    if (status !== 200)
      return c.html(refusalPage(), status === 410 ? 410 : status === 401 || status === 403 ? 403 : 502);
    c.header("content-security-policy", "sandbox allow-scripts");
    return c.html(terminalPage());
  });

  app.get("/screens/*", (c) => {
    log.warn("screen.proxy.target_rejected", {
      "screen.connection_id": newConnectionId(),
      "screen.policy": null,
      "screen.reason": "invalid_path",
      "screen.transport": "http",
    });
    return c.html(refusalPage(), 404);
  });

  app.notFound((c) => c.text("not found", 404));
  return app;
}
