/**
 * Start-up checks that name the cause before anything is started: another launcher on this
 * DATA_DIR, a busy port (which one, and the setting that moves it), an explicit Docker provider
 * without its engine or image.
 */
import { createServer } from "node:net";
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
