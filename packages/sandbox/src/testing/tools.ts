/**
 * The one gate for suites that need a tool on the host (Chromium, Xvfb, x11vnc, xdotool) or a
 * Docker engine with the computer image. Locally a missing tool skips the suite and its title
 * says why; under `CI=true` it throws at collection, so the suite FAILS naming the tool (a CI
 * that silently skips proves nothing). The only skip CI accepts is the explicit opt-out
 * `RAKAZO_TEST_DOCKER=0` for Docker suites, which `./rakazo test` prints in its summary.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dockerUnavailable } from "./docker.ts";

export interface SuiteGate {
  /** True when the suite must not run here (pass to `describe.skipIf`). */
  readonly skip: boolean;
  /** The suite's title, with the reason appended when it is skipped. */
  readonly title: string;
}

const INSTALL_HINT = "scripts/test-tools.sh installs them";

/** The tools (commands on PATH, or absolute paths) that are not on this host. */
export function missingTools(tools: readonly string[]): string[] {
  return tools.filter((tool) =>
    tool.startsWith("/") ? !existsSync(tool) : spawnSync("sh", ["-c", `command -v "${tool}"`]).status !== 0,
  );
}

function ciStrict(): boolean {
  return process.env.CI === "true";
}

/** Docker suites opted out explicitly: the only skip allowed under CI. */
export function dockerOptedOut(): boolean {
  return process.env.RAKAZO_TEST_DOCKER === "0";
}

/**
 * Runs the suite when `tools` are all present. Locally: skip with the missing tools named.
 * Under CI=true: throws, naming them.
 */
export function requireTools(suite: string, tools: readonly string[]): SuiteGate {
  const missing = missingTools(tools);
  if (missing.length === 0) return { skip: false, title: suite };
  const reason = `missing ${missing.join(", ")} (${INSTALL_HINT})`;
  if (ciStrict()) throw new Error(`CI=true: suite "${suite}" cannot run: ${reason}`);
  return { skip: true, title: `${suite} — skipped: ${reason}` };
}

/** Runs the suite as root (losetup, mount). Locally: skip saying so. Under CI=true: throws. */
export function requireRoot(suite: string): SuiteGate {
  if (process.getuid?.() === 0) return { skip: false, title: suite };
  if (ciStrict()) throw new Error(`CI=true: suite "${suite}" cannot run: it needs root`);
  return { skip: true, title: `${suite} — skipped: needs root` };
}

/**
 * Runs the suite when the Docker engine answers and the computer image is present (and any host
 * `tools` too), unless Docker suites are opted out with RAKAZO_TEST_DOCKER=0.
 */
export async function requireDocker(suite: string, tools: readonly string[] = []): Promise<SuiteGate> {
  if (dockerOptedOut()) return { skip: true, title: `${suite} — opted out (RAKAZO_TEST_DOCKER=0)` };
  const unavailable = await dockerUnavailable();
  if (unavailable === undefined) return requireTools(suite, tools);
  if (ciStrict()) throw new Error(`CI=true: suite "${suite}" cannot run: ${unavailable}`);
  return { skip: true, title: `${suite} — skipped: ${unavailable}` };
}

/**
 * For suites whose title lists what is missing: the missing tools (locally, to skip with);
 * under CI=true a non-empty list throws instead, naming them.
 */
export function missingOrFail(suite: string, tools: readonly string[]): string[] {
  const missing = missingTools(tools);
  requireTools(suite, tools);
  return missing;
}
