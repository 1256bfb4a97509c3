/**
 * What a checkpoint leaves out (PER-7): only transient cache, lock and telemetry files inside
 * `.browser-profiles` (`BrowserMetrics/*.pma` are Chromium's persisted histograms, ~4 MB more
 * per browser start, read by nothing a restored browser needs). Cookies, Local State, Preferences, Sessions, IndexedDB, Local Storage and
 * everything outside the profiles are kept.
 */
const PROFILES_DIR = ".browser-profiles";
const TRANSIENT_DIRS = new Set([
  "Cache",
  "Code Cache",
  "GPUCache",
  "Crashpad",
  "ShaderCache",
  "GrShaderCache",
  "GraphiteDawnCache",
  "DawnCache",
  "DawnWebGPUCache",
  "DawnGraphiteCache",
  "BrowserMetrics",
]);

export function isTransientBrowserFile(relPath: string, _type: "file" | "directory"): boolean {
  const parts = relPath.split("/");
  const at = parts.indexOf(PROFILES_DIR);
  if (at === -1 || at === parts.length - 1) return false;
  const inside = parts.slice(at + 1);
  const name = inside.at(-1) ?? "";
  if (name.startsWith("Singleton") || name.endsWith(".lock") || name === "lockfile") return true;
  return inside.some((part) => TRANSIENT_DIRS.has(part));
}
