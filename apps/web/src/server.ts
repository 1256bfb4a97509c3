/** Starts the web service: Hono over @hono/node-server, plus the websocket screen proxy. */

import { readFile } from "node:fs/promises";
import type http from "node:http";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import type { Logger } from "@rakazo/log";
import { createWebApp } from "./app.ts";
import type { ScreenAuthority } from "./authority.ts";
import { bundleScreenClient, bundleTerminalClient } from "./bundle.ts";
import { attachScreenProxy } from "./proxy.ts";
import { loadAppFiles } from "./static.ts";

export interface WebServer {
  readonly url: string;
  close(): Promise<void>;
}

export async function startWebServer(options: {
  readonly authority: ScreenAuthority;
  readonly log: Logger;
  readonly host: string;
  readonly port: number;
  /** The API's URL for the web app's sessions; without it only screens are served. */
  readonly apiUrl?: string | undefined;
  /** WEB_PUBLIC_URL: how browsers reach this service (an https one behind a TLS proxy). */
  readonly publicUrl?: string | undefined;
  /** SCREEN_SERVICE_TOKEN: session cookies are sealed with it, so they outlive this process. */
  readonly sessionSecret?: string | undefined;
  /** Host names served besides loopback ones and the public URL's (`RAKAZO_ALLOWED_HOSTS`). */
  readonly allowedHosts?: readonly string[];
}): Promise<WebServer> {
  const [screenScript, terminalScript] = await Promise.all([bundleScreenClient(), bundleTerminalClient()]);
  // The checkout's README, served at /docs/README.md for the root page's link (absent in images).
  const readme = await readFile(new URL("../../../README.md", import.meta.url), "utf8").catch(
    () => undefined,
  );
  const appFiles = options.apiUrl !== undefined ? await loadAppFiles() : undefined;
  if (options.apiUrl !== undefined && !appFiles)
    options.log.warn("web.app_not_built", { hint: "pnpm --filter @rakazo/web build" });
  const app = createWebApp({
    authority: options.authority,
    log: options.log,
    screenScript,
    terminalScript,
    readme,
    apiUrl: options.apiUrl,
    publicUrl: options.publicUrl,
    sessionSecret: options.sessionSecret,
    allowedHosts: options.allowedHosts ?? [],
    appFiles,
  });
  const server = await new Promise<http.Server>((resolve) => {
    const s = serve({ fetch: app.fetch, hostname: options.host, port: options.port }, () =>
      resolve(s as http.Server),
    );
  });
  const detach = attachScreenProxy(server, options.authority, options.log);
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host}:${port}`,
    async close() {
      detach();
      server.closeAllConnections?.();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
