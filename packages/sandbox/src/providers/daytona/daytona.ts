/**
 * Daytona on the shared remote runtime (CMP-8): a `RemoteBackend` over `@daytonaio/sdk`
 * (0.218.0). The SDK's traps, handled here (docs/providers.md, "Daytona"):
 * - Timeouts are seconds, 0 = none: lifecycle calls pass `lifecycleTimeoutSeconds`; commands
 *   pass no request deadline (the runtime enforces its own in the machine).
 * - `executeCommand` joins stderr into stdout: commands run as session commands, whose answers
 *   keep stdout and stderr apart, in a fresh session per command (wrapped in `bash -c`, so
 *   nothing of one command's shell leaks into the next); a non-zero exit is a result.
 *   Streaming output follows the command's logs over the SDK's websocket.
 * - Auto-stop does not count preview traffic (a person watching a screen) as activity: it is
 *   off (`autoStopInterval: 0`); Rakazo stops machines itself. Auto-archive keeps the service's
 *   interval unless configured.
 * - Gone is `DaytonaNotFoundError` or state `destroyed`/`destroying` (or `error`/`build_failed`
 *   that is not recoverable): reported `missing`, so the machine is replaced (PRV-3).
 * - Preview links are private: the token travels only in `x-daytona-preview-token`, a header
 *   the web proxy sends server-side (SCR-4); it is fetched fresh for every target (standard
 *   tokens reset when the sandbox restarts) and never put in a URL or a log line.
 * - The SDK's socket.io event stream is not opened (`useDeprecatedPolling`): lifecycle waits
 *   poll, and no long-lived socket per process holds the worker open.
 */
import { randomBytes } from "node:crypto";
import {
  Daytona,
  DaytonaConflictError,
  DaytonaError,
  DaytonaNotFoundError,
  type Sandbox as DaytonaSandbox,
} from "@daytonaio/sdk";
import type { DesktopAdmissionSettings } from "../../desktop-admission.ts";
import { SandboxError } from "../../errors.ts";
import type { SandboxProvider, SandboxStatus } from "../../provider.ts";
import { createRemoteProvider } from "../../remote/remote-provider.ts";
import { quote } from "../../remote/shell.ts";
import type { RemoteBackend, RemoteCreateRequest, RemoteMachine } from "../../remote/surface.ts";

export interface DaytonaProviderConfig {
  /** `DAYTONA_API_KEY`: read by the worker and API only, passed to the SDK, never logged. */
  readonly apiKey: string;
  /** `DAYTONA_API_URL`: default the SDK's (`https://app.daytona.io/api`); the emulator in tests. */
  readonly apiUrl?: string;
  readonly target?: string;
  /** The snapshot registered from the computer image; default `rakazo-computer`. */
  readonly snapshot?: string;
  /** The image's unprivileged user's home; default `/home/user` (the computer image's). */
  readonly userHome?: string;
  /** Minutes a stopped machine waits before Daytona archives it; default the service's. */
  readonly autoArchiveMinutes?: number;
  /** Seconds for create/start/stop/delete waits; default 120. */
  readonly lifecycleTimeoutSeconds?: number;
  readonly screenLimit?: number;
  /** The supervisor's desktop admission (CMP-5); unset fields keep its defaults. */
  readonly desktopAdmission?: DesktopAdmissionSettings;
  readonly supervisorBundle: () => Promise<Uint8Array>;
  /** Where the template/snapshot carries the bundle (RAKAZO_REMOTE_SUPERVISOR_IN_IMAGE). */
  readonly supervisorInImage?: string;
}

export const DAYTONA_LABELS = { computer: "rakazo.computer", home: "rakazo.home" } as const;
export const PREVIEW_TOKEN_HEADER = "x-daytona-preview-token";

const RUNNING = new Set([
  "started",
  "starting",
  "creating",
  "restoring",
  "resizing",
  "snapshotting",
  "forking",
]);
const STOPPED = new Set(["stopped", "stopping", "archived", "archiving", "paused", "pausing", "resuming"]);

function isGoneState(sandbox: DaytonaSandbox): boolean {
  const state = sandbox.state ?? "unknown";
  if (state === "destroyed" || state === "destroying") return true;
  return (state === "error" || state === "build_failed") && sandbox.recoverable !== true;
}

function toSandboxError(error: unknown, what: string): Error {
  if (error instanceof SandboxError) return error;
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof DaytonaNotFoundError) {
    return /file|path|no such/i.test(message)
      ? new SandboxError("FILE_NOT_FOUND", `${what}: ${message}`)
      : new SandboxError("SANDBOX_GONE", `${what}: ${message}`, { cause: error });
  }
  if (error instanceof DaytonaConflictError) {
    return new SandboxError("SANDBOX_NOT_RUNNING", `${what}: ${message}`, { cause: error });
  }
  const status = error instanceof DaytonaError ? error.statusCode : undefined;
  return new SandboxError("SANDBOX_PROVIDER_ERROR", `${what}: ${message}`, {
    cause: error,
    ...(status !== undefined ? { details: { status } } : {}),
  });
}

export function createDaytonaBackend(config: Omit<DaytonaProviderConfig, "supervisorBundle">): RemoteBackend {
  const daytona = new Daytona({
    apiKey: config.apiKey,
    ...(config.apiUrl ? { apiUrl: config.apiUrl } : {}),
    ...(config.target ? { target: config.target } : {}),
    useDeprecatedPolling: true,
  });
  const timeout = config.lifecycleTimeoutSeconds ?? 120;

  const labels = (request: RemoteCreateRequest) => ({
    [DAYTONA_LABELS.computer]: request.computerId,
    [DAYTONA_LABELS.home]: request.homeKey,
  });

  const get = async (ref: string): Promise<DaytonaSandbox | undefined> => {
    try {
      const sandbox = await daytona.get(ref);
      return isGoneState(sandbox) ? undefined : sandbox;
    } catch (error) {
      if (error instanceof DaytonaNotFoundError) return undefined;
      throw toSandboxError(error, `get ${ref}`);
    }
  };

  const machine = (sandbox: DaytonaSandbox): RemoteMachine => ({
    async run(command) {
      const session = `rakazo-${randomBytes(8).toString("hex")}`;
      const wrapped = `bash -c ${quote(command.command)}`;
      try {
        await sandbox.process.createSession(session);
        const onOutput = command.onOutput;
        if (!onOutput) {
          const done = await sandbox.process.executeSessionCommand(session, { command: wrapped });
          return { exitCode: done.exitCode ?? 1, stdout: done.stdout ?? "", stderr: done.stderr ?? "" };
        }
        const started = await sandbox.process.executeSessionCommand(session, {
          command: wrapped,
          runAsync: true,
        });
        const cmdId = started.cmdId;
        let stdout = "";
        let stderr = "";
        await sandbox.process.getSessionCommandLogs(
          session,
          cmdId,
          (data) => {
            stdout += data;
            onOutput("stdout", data);
          },
          (data) => {
            stderr += data;
            onOutput("stderr", data);
          },
        );
        // The log stream closes when the command ends; its exit code may lag a moment.
        for (let attempt = 0; attempt < 100; attempt += 1) {
          const status = await sandbox.process.getSessionCommand(session, cmdId);
          if (typeof status.exitCode === "number") return { exitCode: status.exitCode, stdout, stderr };
          await new Promise((r) => setTimeout(r, 50));
        }
        throw new SandboxError("SANDBOX_PROVIDER_ERROR", `command ${cmdId} ended without an exit code`);
      } catch (error) {
        throw toSandboxError(error, "command");
      } finally {
        await sandbox.process.deleteSession(session).catch(() => undefined);
      }
    },
    async readFile(path) {
      try {
        return new Uint8Array(await sandbox.fs.downloadFile(path));
      } catch (error) {
        const status = (error as { statusCode?: number }).statusCode;
        if (status === 404 || (error instanceof Error && /not found/i.test(error.message))) {
          throw new SandboxError("FILE_NOT_FOUND", `read ${path}: not found`);
        }
        throw toSandboxError(error, `read ${path}`);
      }
    },
    async writeFile(path, data) {
      try {
        await sandbox.fs.uploadFile(Buffer.from(data), path);
      } catch (error) {
        throw toSandboxError(error, `write ${path}`);
      }
    },
    async portUrl(port) {
      try {
        // Fresh every time: a restart resets standard tokens.
        const link = await sandbox.getPreviewLink(port);
        return { url: link.url.replace(/\/$/, ""), headers: { [PREVIEW_TOKEN_HEADER]: link.token } };
      } catch (error) {
        throw toSandboxError(error, `preview ${port}`);
      }
    },
  });

  return {
    kind: "daytona",
    workspace: `${config.userHome ?? "/home/user"}/rakazo-home`,
    userHome: config.userHome ?? "/home/user",

    async create(request) {
      try {
        const sandbox = await daytona.create(
          {
            snapshot: config.snapshot ?? "rakazo-computer",
            labels: labels(request),
            public: false,
            networkBlockAll: true,
            autoStopInterval: 0,
            ...(config.autoArchiveMinutes !== undefined
              ? { autoArchiveInterval: config.autoArchiveMinutes }
              : {}),
          },
          { timeout },
        );
        return { ref: sandbox.id, machine: machine(sandbox) };
      } catch (error) {
        throw toSandboxError(error, "create");
      }
    },

    async find(request) {
      try {
        let fallback: string | undefined;
        for await (const sandbox of await daytona.list({ labels: labels(request) })) {
          if (isGoneState(sandbox)) continue;
          if (sandbox.state === "started") return sandbox.id;
          fallback ??= sandbox.id;
        }
        return fallback;
      } catch (error) {
        throw toSandboxError(error, "list");
      }
    },

    async open(ref) {
      const sandbox = await get(ref);
      if (!sandbox) throw new SandboxError("SANDBOX_GONE", `daytona sandbox ${ref} is gone`);
      try {
        // start() also resumes stopped, paused and archived machines.
        if (sandbox.state !== "started") await sandbox.start(timeout);
      } catch (error) {
        throw toSandboxError(error, `start ${ref}`);
      }
      return machine(sandbox);
    },

    async state(ref): Promise<SandboxStatus> {
      const sandbox = await get(ref);
      if (!sandbox) return "missing";
      if (RUNNING.has(sandbox.state ?? "")) return "running";
      if (STOPPED.has(sandbox.state ?? "")) return "stopped";
      return "missing";
    },

    async pause(ref) {
      const sandbox = await get(ref);
      if (!sandbox) throw new SandboxError("SANDBOX_GONE", `daytona sandbox ${ref} is gone`);
      try {
        if (sandbox.state !== "stopped") await sandbox.stop(timeout);
      } catch (error) {
        throw toSandboxError(error, `stop ${ref}`);
      }
    },

    async kill(ref) {
      const sandbox = await get(ref);
      if (!sandbox) return;
      try {
        await sandbox.delete(timeout);
      } catch (error) {
        if (error instanceof DaytonaNotFoundError) return;
        throw toSandboxError(error, `delete ${ref}`);
      }
    },
  };
}

export function createDaytonaProvider(config: DaytonaProviderConfig): SandboxProvider {
  return createRemoteProvider({
    backend: createDaytonaBackend(config),
    supervisorBundle: config.supervisorBundle,
    ...(config.supervisorInImage !== undefined ? { supervisorInImage: config.supervisorInImage } : {}),
    ...(config.screenLimit !== undefined ? { screenLimit: config.screenLimit } : {}),
    ...(config.desktopAdmission !== undefined ? { desktopAdmission: config.desktopAdmission } : {}),
  });
}
