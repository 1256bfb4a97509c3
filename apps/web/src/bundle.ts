/**
 * Bundles the noVNC page's script once at startup, in memory: @novnc/novnc 1.7 is ESM with
 * top-level await, so ESM and es2022 (providers.md §10). No build step to forget.
 */
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

export async function bundleScreenClient(): Promise<string> {
  const result = await build({
    entryPoints: [fileURLToPath(new URL("./client/screen.ts", import.meta.url))],
    bundle: true,
    format: "esm",
    target: "es2022",
    platform: "browser",
    minify: true,
    write: false,
    logLevel: "silent",
  });
  const file = result.outputFiles[0];
  if (!file) throw new Error("esbuild produced no output");
  return file.text;
}
