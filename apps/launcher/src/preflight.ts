/**
 * Start-up checks that name the cause before anything is started: another launcher on this
 * DATA_DIR, a busy port (which one, and the setting that moves it), an explicit Docker provider
 * without its engine or image, an explicit host provider without its desktop tools; the
 * supervisor bundle staged for the host and cloud providers.
 */
import { spawnSync } from "node:child_process";
import { createServer } from "node:net";
import { basename, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { dockerReady } from "./docker-probe.ts";
import { StartupError } from "./startup-error.ts";
import { alive, readState } from "./state.ts";

export interface PortNeed {
  readonly host: string;
  readonly port: number;
  /** The variable that changes it, e.g. API_PORT. */
  readonly setting: string;
}

function portFree(host: string, port: number): Promise<NodeJS.ErrnoException | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", (error: NodeJS.ErrnoException) => resolve(error));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(undefined)));
  });
}

export function assertNotRunning(dataDir: string): void {
  const state = readState(dataDir);
  if (state && alive(state.pid)) {
    throw new StartupError(
      `Rakazo is already running from ${dataDir} (launcher pid ${state.pid}, API ${state.api.url}). ` +
        "See ./rakazo status; stop it with ./rakazo stop.",
    );
  }
}

export async function assertPortsFree(needs: readonly PortNeed[]): Promise<void> {
  for (const need of needs) {
    const error = await portFree(need.host, need.port);
    if (!error) continue;
    const why = error.code === "EADDRINUSE" ? "is already in use" : `cannot be used (${error.code})`;
    throw new StartupError(
      `port ${need.port} on ${need.host} ${why}. Stop what listens there, or set ${need.setting} ` +
        `to another port (environment or .env).`,
    );
  }
}

/** `RAKAZO_PROVIDER=docker` was asked for explicitly: without engine or image, say so now. */
export async function assertDockerUsable(socketPath: string, image: string): Promise<void> {
  const docker = await dockerReady(socketPath, image);
  if (!docker.ready) {
    throw new StartupError(
      `RAKAZO_PROVIDER=docker, but ${docker.reason}. Engine: bash scripts/docker-engine.sh; ` +
        "image: bash infra/sandboxes/image/build.sh. Or set RAKAZO_PROVIDER=auto to fall back to the fake provider.",
    );
  }
}

/** What the host provider (PRV-6) runs on this machine: the distribution's desktop tools. */
const HOST_PROVIDER_TOOLS = ["Xvfb", "chromium", "x11vnc", "xdotool", "unshare", "nsenter", "ip"] as const;

function onPath(tool: string): boolean {
  return spawnSync("sh", ["-c", `command -v "${tool}"`]).status === 0;
}

/**
 * `RAKAZO_PROVIDER=host`: the desktop tools must be installed, and the supervisor bundle is
 * staged where the provider runs it from (the same file the computer image ships).
 */
export function prepareHostProvider(bundle: string): void {
  const missing = HOST_PROVIDER_TOOLS.filter((tool) => !onPath(tool));
  if (missing.length > 0) {
    throw new StartupError(
      `RAKAZO_PROVIDER=host, but ${missing.join(", ")} ${missing.length === 1 ? "is" : "are"} not installed ` +
        "(Debian/Ubuntu: apt-get install xvfb chromium x11vnc xdotool util-linux iproute2).",
    );
  }
  stageSupervisorBundle(bundle, "RAKAZO_PROVIDER=host");
}

/**
 * A cloud provider (`RAKAZO_PROVIDER=e2b|novita|daytona|boat`, never chosen by `auto`): its key
 * was checked when the environment was parsed; the supervisor bundle the runtime installs into
 * every machine (CMP-8) is staged where API and worker read it.
 */
export function prepareRemoteProvider(kind: string, bundle: string): void {
  stageSupervisorBundle(bundle, `RAKAZO_PROVIDER=${kind}`);
}

/** `build.sh --stage-supervisor`: the same bundle the computer image ships, at `bundle`. */
function stageSupervisorBundle(bundle: string, why: string): void {
  const buildSh = fileURLToPath(new URL("../../../infra/sandboxes/image/build.sh", import.meta.url));
  const staged = spawnSync("bash", [buildSh, "--stage-supervisor", dirname(bundle)], { encoding: "utf8" });
  if (staged.status !== 0 || basename(bundle) !== "supervisor.mjs") {
    throw new StartupError(
      `${why}: could not stage the supervisor bundle at ${bundle} ` +
        `(it must be named supervisor.mjs): ${(staged.stderr ?? "").trim()}`,
    );
  }
}
