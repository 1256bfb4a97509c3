/**
 * Vitest global setup (integration and docker projects): builds the web app (`vite build`, as
 * `pnpm --filter @rakazo/web build` does) when apps/web/dist is missing or older than its
 * sources, so a fresh clone's test command serves the real production build.
 */
import { readdir, stat } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

const WEB = fileURLToPath(new URL("../../", import.meta.url));

async function newest(dir: string): Promise<number> {
  let latest = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    latest = Math.max(latest, (await stat(path.join(entry.parentPath, entry.name))).mtimeMs);
  }
  return latest;
}

export async function buildWebAppIfStale(): Promise<void> {
  const built = await stat(path.join(WEB, "dist/index.html")).then(
    (s) => s.mtimeMs,
    () => 0,
  );
  const sources = Math.max(
    await newest(path.join(WEB, "ui")),
    // What the app bundles from the workspace.
    await newest(path.join(WEB, "../../packages/client/src")),
    await newest(path.join(WEB, "../../packages/protocol/src")),
    (await stat(path.join(WEB, "vite.config.ts"))).mtimeMs,
  );
  if (built > sources) return;
  const { build } = await import("vite");
  // Vitest sets NODE_ENV=test, and Vite keeps a NODE_ENV it finds: React's development build
  // (~40 % more JS, dev-only warnings) would be what every browser test and `pnpm bench`
  // served. The production build is what a self-hoster gets, so that is what is built here.
  const nodeEnv = process.env.NODE_ENV;
  process.env.NODE_ENV = "production";
  try {
    await build({ configFile: path.join(WEB, "vite.config.ts"), mode: "production", logLevel: "warn" });
  } finally {
    if (nodeEnv === undefined) delete process.env.NODE_ENV;
    else process.env.NODE_ENV = nodeEnv;
  }
}

/** The vitest global setup entry. */
export default async function setup(): Promise<void> {
  await buildWebAppIfStale();
}
