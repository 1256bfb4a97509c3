/**
 * The web app's production build: `vite build` writes apps/web/dist (index.html and
 * hashed files under app/), read once at startup and served from memory — no dev server in
 * production. Absent a build, the service still serves screens and says how to build the app.
 */
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const APP_DIST = fileURLToPath(new URL("../dist/", import.meta.url));

export interface AppFiles {
  readonly index: string;
  /** `/app/<name>` → body and content type. */
  readonly assets: ReadonlyMap<string, { readonly body: Uint8Array; readonly type: string }>;
}

const TYPES: Record<string, string> = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".woff2": "font/woff2",
  ".json": "application/json",
};

/** The built app, or undefined when `dist/index.html` does not exist. */
export async function loadAppFiles(dir = APP_DIST): Promise<AppFiles | undefined> {
  const index = await readFile(path.join(dir, "index.html"), "utf8").catch(() => undefined);
  if (index === undefined) return undefined;
  const assets = new Map<string, { body: Uint8Array; type: string }>();
  const appDir = path.join(dir, "app");
  for (const name of await readdir(appDir).catch(() => [] as string[])) {
    const type = TYPES[path.extname(name)];
    if (!type) continue;
    assets.set(`/app/${name}`, { body: await readFile(path.join(appDir, name)), type });
  }
  return { index, assets };
}

/** The app page's policy: its own scripts only, screens and shells framed from this origin. */
export const APP_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  // xterm.js and React set inline styles.
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "frame-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join("; ");
