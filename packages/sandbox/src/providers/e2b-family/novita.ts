/**
 * Novita through `novita-sandbox` (an E2B fork; `novita-sandbox/desktop` mirrors `@e2b/desktop`):
 * the family backend bound to its SDK. Differences handled here: `connect` always sends a TTL
 * (300 s unless given — the family backend always gives it), the instance `kill()` returns
 * nothing (the static one is used), errors carry no HTTP status, and an error answer with an
 * empty body counts as success in the SDK (emulators.md §2), so the emulator always sends one.
 */
import {
  AuthenticationError,
  CommandExitError,
  FileNotFoundError,
  Sandbox,
  SandboxNotFoundError,
  TimeoutError,
} from "novita-sandbox";
import { Sandbox as DesktopSandbox } from "novita-sandbox/desktop";
import type { SandboxProvider } from "../../provider.ts";
import { createRemoteProvider } from "../../remote/remote-provider.ts";
import { createFamilyBackend, type FamilySandbox, type FamilySdk } from "./family.ts";

export interface NovitaProviderConfig {
  /** `NOVITA_API_KEY`: read by the worker and API only, passed to the SDK, never logged. */
  readonly apiKey: string;
  /** `NOVITA_API_URL` / `NOVITA_SANDBOX_URL`: a local emulator instead of Novita. */
  readonly apiUrl?: string;
  readonly sandboxUrl?: string;
  readonly domain?: string;
  /** Default `desktop`. */
  readonly template?: string;
  readonly ttlMs?: number;
  readonly onTimeout?: "pause" | "kill";
  /** `NOVITA_PORT_URL`: how a hosted port's host maps to a URL; default `https://{host}`. */
  readonly portUrlTemplate?: string;
  readonly screenLimit?: number;
  readonly supervisorBundle: () => Promise<Uint8Array>;
}

function novitaSdk(config: NovitaProviderConfig): FamilySdk {
  const connection = {
    apiKey: config.apiKey,
    ...(config.apiUrl ? { apiUrl: config.apiUrl } : {}),
    ...(config.sandboxUrl ? { sandboxUrl: config.sandboxUrl } : {}),
    ...(config.domain ? { domain: config.domain } : {}),
  };
  return {
    async create(template, options) {
      const sbx = await Sandbox.create(template, {
        ...connection,
        metadata: options.metadata,
        timeoutMs: options.timeoutMs,
        lifecycle: { onTimeout: options.onTimeout },
        allowInternetAccess: false,
        network: { allowPublicTraffic: false },
      });
      return sbx as unknown as FamilySandbox;
    },
    async connect(sandboxId, options) {
      return (await DesktopSandbox.connect(sandboxId, {
        ...connection,
        timeoutMs: options.timeoutMs,
      })) as unknown as FamilySandbox;
    },
    async getState(sandboxId) {
      return (await Sandbox.getInfo(sandboxId, connection)).state;
    },
    async list(metadata) {
      const pager = Sandbox.list({
        ...connection,
        query: { metadata, state: ["running", "paused"] },
        limit: 100,
      });
      const found: { sandboxId: string; state: string }[] = [];
      while (pager.hasNext) {
        for (const info of await pager.nextItems())
          found.push({ sandboxId: info.sandboxId, state: info.state });
      }
      return found;
    },
    pause: (sandboxId) => Sandbox.pause(sandboxId, connection),
    kill: (sandboxId) => Sandbox.kill(sandboxId, connection),
    errors: {
      commandExit: (error) =>
        error instanceof CommandExitError
          ? { exitCode: error.exitCode, stdout: error.stdout, stderr: error.stderr }
          : undefined,
      sandboxNotFound: (error) => error instanceof SandboxNotFoundError,
      fileNotFound: (error) => error instanceof FileNotFoundError,
      authentication: (error) => error instanceof AuthenticationError,
      timeout: (error) => error instanceof TimeoutError,
      status: () => undefined,
    },
    trafficHeader: "e2b-traffic-access-token",
  };
}

export function createNovitaProvider(config: NovitaProviderConfig): SandboxProvider {
  return createRemoteProvider({
    backend: createFamilyBackend({
      kind: "novita",
      sdk: novitaSdk(config),
      template: config.template ?? "desktop",
      ...(config.ttlMs !== undefined ? { ttlMs: config.ttlMs } : {}),
      ...(config.onTimeout !== undefined ? { onTimeout: config.onTimeout } : {}),
      ...(config.portUrlTemplate !== undefined ? { portUrlTemplate: config.portUrlTemplate } : {}),
    }),
    supervisorBundle: config.supervisorBundle,
    ...(config.screenLimit !== undefined ? { screenLimit: config.screenLimit } : {}),
  });
}
