/**
 * E2B through `@e2b/desktop` (its `Sandbox` extends e2b's): the family backend bound to the e2b
 * SDK. Machines are made with e2b's plain `Sandbox.create` on the desktop template — the
 * desktop SDK's own `create` would start its built-in Xvfb+XFCE, and every Rakazo desktop is a
 * supervisor slot instead — and reconnected with `@e2b/desktop`'s `Sandbox.connect`.
 * Traffic to hosted ports needs the sandbox's traffic access token (public traffic off), which
 * only the server-side proxy sends (SCR-4).
 */
import {
  AuthenticationError,
  CommandExitError,
  Sandbox as DesktopSandbox,
  SandboxError as E2BSandboxError,
  FileNotFoundError,
  SandboxNotFoundError,
  ServiceBusyError,
  TimeoutError,
} from "@e2b/desktop";
import { Sandbox } from "e2b";
import type { SandboxProvider } from "../../provider.ts";
import { createRemoteProvider } from "../../remote/remote-provider.ts";
import { createFamilyBackend, type FamilySandbox, type FamilySdk } from "./family.ts";

export interface E2BProviderConfig {
  /** `E2B_API_KEY`: read by the worker and API only, passed to the SDK, never logged. */
  readonly apiKey: string;
  /** `E2B_API_URL` / `E2B_SANDBOX_URL`: a local emulator (packages/emulators) instead of E2B. */
  readonly apiUrl?: string;
  readonly sandboxUrl?: string;
  readonly domain?: string;
  /** Default `desktop`. */
  readonly template?: string;
  readonly ttlMs?: number;
  readonly onTimeout?: "pause" | "kill";
  /** `E2B_PORT_URL`: how a hosted port's host maps to a URL; default `https://{host}`. */
  readonly portUrlTemplate?: string;
  readonly screenLimit?: number;
  /** The supervisor bundle installed into every machine. */
  readonly supervisorBundle: () => Promise<Uint8Array>;
}

function e2bSdk(config: E2BProviderConfig): FamilySdk {
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
        // Computers have no network unless a policy opens it; hosted ports need the token.
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
      while (pager.hasNext)
        for (const info of await pager.nextItems())
          found.push({ sandboxId: info.sandboxId, state: info.state });
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
      status: (error) =>
        error instanceof ServiceBusyError
          ? 503
          : error instanceof E2BSandboxError
            ? error.statusCode
            : undefined,
    },
    trafficHeader: "e2b-traffic-access-token",
  };
}

export function createE2BProvider(config: E2BProviderConfig): SandboxProvider {
  return createRemoteProvider({
    backend: createFamilyBackend({
      kind: "e2b",
      sdk: e2bSdk(config),
      template: config.template ?? "desktop",
      ...(config.ttlMs !== undefined ? { ttlMs: config.ttlMs } : {}),
      ...(config.onTimeout !== undefined ? { onTimeout: config.onTimeout } : {}),
      ...(config.portUrlTemplate !== undefined ? { portUrlTemplate: config.portUrlTemplate } : {}),
    }),
    supervisorBundle: config.supervisorBundle,
    ...(config.screenLimit !== undefined ? { screenLimit: config.screenLimit } : {}),
  });
}
