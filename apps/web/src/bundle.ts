/**
 * Bundles the noVNC page's script once at startup, in memory: @novnc/novnc 1.7 is ESM with
 * top-level await, so ESM and es2022. No build step to forget.
 */
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

export function bundleScreenClient(): Promise<string> {
  return bundleClient("./client/screen.ts");
}

/** The terminal page's script: xterm.js and the terminal frame protocol (TRM-4). */
export function bundleTerminalClient(): Promise<string> {
  return bundleClient("./client/terminal.ts");
}

async function bundleClient(entry: string): Promise<string> {
  const result = await build({
    entryPoints: [fileURLToPath(new URL(entry, import.meta.url))],
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
