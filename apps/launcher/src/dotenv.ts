/**
 * `.env` at the repository root, when present, fills in what the environment leaves unset
 * (variables set in the environment win). Blank values mean unset (parseRuntimeEnv).
 */
import { existsSync, readFileSync } from "node:fs";
import { parseEnv } from "node:util";

const REPOSITORY_ROOT = new URL("../../../", import.meta.url);

/** Merges the root `.env` into `env` in place; returns the file's path when one was read. */
export function loadDotEnv(env: NodeJS.ProcessEnv, root: URL = REPOSITORY_ROOT): string | undefined {
  const file = new URL(".env", root);
  if (!existsSync(file)) return undefined;
  for (const [key, value] of Object.entries(parseEnv(readFileSync(file, "utf8")))) {
    if (env[key] === undefined) env[key] = value;
  }
  return file.pathname;
}
