/**
 * What E2B's and Novita's SDKs share beyond the backend (family.ts): the same static calls on
 * `Sandbox`, the same error classes, the same settings. `e2b.ts` and `novita.ts` only name their
 * SDK's modules and what differs (how an error carries its HTTP status).
 */
import type { DesktopAdmissionSettings } from "../../desktop-admission.ts";
import type { ProviderKind, SandboxProvider } from "../../provider.ts";
import { createRemoteProvider } from "../../remote/remote-provider.ts";
import { createFamilyBackend, type FamilySandbox, type FamilySdk } from "./family.ts";

/** Settings of a family provider (`E2B_*` / `NOVITA_*`). */
export interface FamilyProviderConfig {
  /** Read by the worker and API only, passed to the SDK, never logged. */
  readonly apiKey: string;
  /** A local emulator (packages/emulators) instead of the service. */
  readonly apiUrl?: string;
  readonly sandboxUrl?: string;
  readonly domain?: string;
  /** Default `desktop`. */
  readonly template?: string;
  readonly ttlMs?: number;
  readonly onTimeout?: "pause" | "kill";
  /** How a hosted port's host maps to a URL; default `https://{host}`. */
  readonly portUrlTemplate?: string;
  readonly screenLimit?: number;
  /** The supervisor's desktop admission (CMP-5); unset fields keep its defaults. */
  readonly desktopAdmission?: DesktopAdmissionSettings;
  /** The supervisor bundle installed into every machine. */
  readonly supervisorBundle: () => Promise<Uint8Array>;
  /** Where the template/snapshot carries the bundle (RAKAZO_REMOTE_SUPERVISOR_IN_IMAGE). */
  readonly supervisorInImage?: string;
}

type Options = Record<string, unknown>;
type ErrorClass<T = object> = abstract new (...args: never[]) => T;

/** The parts of an SDK package the binding calls (method syntax: the SDKs' option types fit). */
export interface FamilyModules {
  readonly Sandbox: {
    create(template: string, options: Options): Promise<unknown>;
    getInfo(sandboxId: string, options: Options): Promise<{ state: string }>;
    list(options: Options): {
      readonly hasNext: boolean;
      nextItems(): Promise<readonly { sandboxId: string; state: string }[]>;
    };
    pause(sandboxId: string, options: Options): Promise<unknown>;
    kill(sandboxId: string, options: Options): Promise<boolean>;
  };
  /** The desktop SDK's `Sandbox`, whose `connect` resumes a paused machine. */
  readonly DesktopSandbox: { connect(sandboxId: string, options: Options): Promise<unknown> };
  readonly CommandExitError: ErrorClass<{ exitCode: number; stdout: string; stderr: string }>;
  readonly SandboxNotFoundError: ErrorClass;
  readonly FileNotFoundError: ErrorClass;
  readonly AuthenticationError: ErrorClass;
  readonly TimeoutError: ErrorClass;
  /** The HTTP status an SDK error carries, where it carries one. */
  readonly status: (error: unknown) => number | undefined;
}

function bindSdk(modules: FamilyModules, config: FamilyProviderConfig): FamilySdk {
  const { Sandbox, DesktopSandbox } = modules;
  const connection = {
    apiKey: config.apiKey,
    ...(config.apiUrl ? { apiUrl: config.apiUrl } : {}),
    ...(config.sandboxUrl ? { sandboxUrl: config.sandboxUrl } : {}),
    ...(config.domain ? { domain: config.domain } : {}),
  };
  return {
    async create(template, options) {
      // Plain `Sandbox.create` on the desktop template: the desktop SDK's own `create` would
      // start its built-in desktop, and every Rakazo desktop is a supervisor slot instead.
      const sandbox = await Sandbox.create(template, {
        ...connection,
        metadata: options.metadata,
        timeoutMs: options.timeoutMs,
        lifecycle: { onTimeout: options.onTimeout },
        // Computers have no network unless a policy opens it; hosted ports need the token.
        allowInternetAccess: false,
        network: { allowPublicTraffic: false },
      });
      return sandbox as FamilySandbox;
    },
    async connect(sandboxId, options) {
      return (await DesktopSandbox.connect(sandboxId, {
        ...connection,
        timeoutMs: options.timeoutMs,
      })) as FamilySandbox;
    },
    async getState(sandboxId) {
      return (await Sandbox.getInfo(sandboxId, connection)).state as "running" | "paused";
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
        error instanceof modules.CommandExitError
          ? { exitCode: error.exitCode, stdout: error.stdout, stderr: error.stderr }
          : undefined,
      sandboxNotFound: (error) => error instanceof modules.SandboxNotFoundError,
      fileNotFound: (error) => error instanceof modules.FileNotFoundError,
      authentication: (error) => error instanceof modules.AuthenticationError,
      timeout: (error) => error instanceof modules.TimeoutError,
      status: modules.status,
    },
    trafficHeader: "e2b-traffic-access-token",
  };
}

export function createFamilyProvider(
  kind: ProviderKind,
  modules: FamilyModules,
  config: FamilyProviderConfig,
): SandboxProvider {
  return createRemoteProvider({
    backend: createFamilyBackend({
      kind,
      sdk: bindSdk(modules, config),
      template: config.template ?? "desktop",
      ...(config.ttlMs !== undefined ? { ttlMs: config.ttlMs } : {}),
      ...(config.onTimeout !== undefined ? { onTimeout: config.onTimeout } : {}),
      ...(config.portUrlTemplate !== undefined ? { portUrlTemplate: config.portUrlTemplate } : {}),
    }),
    supervisorBundle: config.supervisorBundle,
    ...(config.supervisorInImage !== undefined ? { supervisorInImage: config.supervisorInImage } : {}),
    ...(config.screenLimit !== undefined ? { screenLimit: config.screenLimit } : {}),
    ...(config.desktopAdmission !== undefined ? { desktopAdmission: config.desktopAdmission } : {}),
  });
}
