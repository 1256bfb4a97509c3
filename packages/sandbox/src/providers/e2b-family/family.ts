/**
 * The E2B family of cloud sandboxes (E2B and its fork Novita): one `RemoteBackend` over the
 * few SDK calls both share, with every trap of their SDKs handled here once (docs/providers.md,
 * "E2B" and "Novita"):
 * - a non-zero exit throws `CommandExitError`: caught into a result with its exit code;
 * - commands and streams default to a 60 s deadline: the runtime's deadline (or 0 = none) is
 *   always passed, so a 15-minute command is not cut;
 * - `connect` resets the TTL (Novita sends 300 s unless told): every connect passes the
 *   configured TTL explicitly;
 * - a sandbox keeps its envd token across pause and resume (the SDK's `sbx.connect()` discards
 *   the answer and keeps the token from create, so the service must): a cached object stays
 *   usable after another process resumed the machine. Should envd still refuse the token (401),
 *   that becomes `StaleMachineError` and the runtime reopens the machine once;
 * - missing sandboxes: `SandboxNotFoundError` and `kill() === false` mean gone, never an error
 *   for `kill`;
 * - provider error bodies become `SANDBOX_PROVIDER_ERROR` with the HTTP status in `details`;
 *   the API key is only ever an SDK option, never in a message, URL or log line.
 */
import { SandboxError } from "../../errors.ts";
import type { ProviderKind, SandboxStatus } from "../../provider.ts";
import {
  type RemoteBackend,
  type RemoteCommandResult,
  type RemoteCreateRequest,
  type RemoteMachine,
  StaleMachineError,
} from "../../remote/surface.ts";

/** The SDK sandbox object as both SDKs shape it (the calls this backend makes). */
export interface FamilySandbox {
  readonly sandboxId: string;
  readonly trafficAccessToken?: string | undefined;
  readonly commands: {
    run(
      command: string,
      options: {
        timeoutMs: number;
        requestTimeoutMs?: number;
        onStdout?: (data: string) => void;
        onStderr?: (data: string) => void;
      },
    ): Promise<{ exitCode: number; stdout: string; stderr: string }>;
  };
  readonly files: {
    read(path: string, options: { format: "bytes" }): Promise<Uint8Array>;
    write(path: string, data: ArrayBuffer): Promise<unknown>;
  };
  getHost(port: number): string;
}

/** What `${kind}.ts` binds from its SDK. */
export interface FamilySdk {
  create(
    template: string,
    options: { metadata: Record<string, string>; timeoutMs: number; onTimeout: "pause" | "kill" },
  ): Promise<FamilySandbox>;
  /** Resumes a paused sandbox; always called with the TTL. */
  connect(sandboxId: string, options: { timeoutMs: number }): Promise<FamilySandbox>;
  getState(sandboxId: string): Promise<"running" | "paused">;
  list(metadata: Record<string, string>): Promise<readonly { sandboxId: string; state: string }[]>;
  pause(sandboxId: string): Promise<unknown>;
  /** false: not found. */
  kill(sandboxId: string): Promise<boolean>;
  readonly errors: {
    readonly commandExit: (
      error: unknown,
    ) => { exitCode: number; stdout: string; stderr: string } | undefined;
    readonly sandboxNotFound: (error: unknown) => boolean;
    readonly fileNotFound: (error: unknown) => boolean;
    readonly authentication: (error: unknown) => boolean;
    readonly timeout: (error: unknown) => boolean;
    readonly status: (error: unknown) => number | undefined;
  };
  /** The header that carries the sandbox's traffic access token on hosted ports. */
  readonly trafficHeader: string;
}

export interface FamilyBackendOptions {
  readonly kind: ProviderKind;
  readonly sdk: FamilySdk;
  /** The sandbox template: a desktop template with Node, Xvfb, Chromium and x11vnc. */
  readonly template: string;
  /** Sandbox TTL, sent on create and on every connect (default 1 h). */
  readonly ttlMs?: number;
  /** What the service does at the TTL: pause keeps the filesystem (default), kill removes it. */
  readonly onTimeout?: "pause" | "kill";
  /**
   * The base URL of a hosted port from the SDK's `getHost(port)` host name; default
   * `https://{host}`. A local emulator serves hosts under its own address instead.
   */
  readonly portUrlTemplate?: string;
}

/** Metadata keys marking Rakazo's machines; set at create, read by `find`. */
export const METADATA = { computer: "rakazo_computer", home: "rakazo_home" } as const;

const DEFAULT_TTL_MS = 60 * 60_000;

function mapFamilyError(sdk: FamilySdk, error: unknown, what: string): Error {
  if (error instanceof SandboxError || error instanceof StaleMachineError) return error;
  const message = error instanceof Error ? error.message : String(error);
  if (sdk.errors.sandboxNotFound(error))
    return new SandboxError("SANDBOX_GONE", `${what}: ${message}`, { cause: error });
  if (sdk.errors.fileNotFound(error))
    return new SandboxError("FILE_NOT_FOUND", `${what}: ${message}`, { cause: error });
  const status = sdk.errors.status(error);
  return new SandboxError("SANDBOX_PROVIDER_ERROR", `${what}: ${message}`, {
    cause: error,
    ...(status !== undefined ? { details: { status } } : {}),
  });
}

export function createFamilyBackend(options: FamilyBackendOptions): RemoteBackend {
  const { sdk } = options;
  const ttlMs = options.ttlMs ?? DEFAULT_TTL_MS;
  const portUrlTemplate = options.portUrlTemplate ?? "https://{host}";
  const fail = (error: unknown, what: string) => mapFamilyError(sdk, error, what);

  const machine = (sbx: FamilySandbox): RemoteMachine => {
    /** envd calls: a rejected token means the SDK object's credentials went stale. */
    const envd = async <T>(what: string, call: () => Promise<T>): Promise<T> => {
      try {
        return await call();
      } catch (error) {
        if (sdk.errors.authentication(error))
          throw new StaleMachineError(`${what}: envd refused the sandbox token`);
        throw fail(error, what);
      }
    };
    return {
      async run(command): Promise<RemoteCommandResult> {
        let stdout = "";
        let stderr = "";
        try {
          const result = await sbx.commands.run(command.command, {
            timeoutMs: command.timeoutMs,
            onStdout: (data) => {
              stdout += data;
              command.onOutput?.("stdout", data);
            },
            onStderr: (data) => {
              stderr += data;
              command.onOutput?.("stderr", data);
            },
          });
          return { exitCode: result.exitCode, stdout: result.stdout, stderr: result.stderr };
        } catch (error) {
          const exit = sdk.errors.commandExit(error);
          if (exit) return { exitCode: exit.exitCode, stdout: exit.stdout, stderr: exit.stderr };
          // Only the backstop past the in-machine `timeout` reaches here: a deadline result.
          if (command.timeoutMs > 0 && sdk.errors.timeout(error)) return { exitCode: 124, stdout, stderr };
          if (sdk.errors.authentication(error))
            throw new StaleMachineError("command: envd refused the sandbox token");
          throw fail(error, "command");
        }
      },
      readFile: (path) => envd(`read ${path}`, () => sbx.files.read(path, { format: "bytes" })),
      async writeFile(path, data) {
        const copy = data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength) as ArrayBuffer;
        await envd(`write ${path}`, () => sbx.files.write(path, copy));
      },
      async portUrl(port) {
        const url = portUrlTemplate.replace("{host}", sbx.getHost(port)).replace(/\/$/, "");
        const token = sbx.trafficAccessToken;
        return token ? { url, headers: { [sdk.trafficHeader]: token } } : { url };
      },
    };
  };

  const metadata = (request: RemoteCreateRequest) => ({
    [METADATA.computer]: request.computerId,
    [METADATA.home]: request.homeKey,
  });

  return {
    kind: options.kind,
    workspace: "/home/user/rakazo-home",
    userHome: "/home/user",

    async create(request) {
      try {
        const sbx = await sdk.create(options.template, {
          metadata: metadata(request),
          timeoutMs: ttlMs,
          onTimeout: options.onTimeout ?? "pause",
        });
        return { ref: sbx.sandboxId, machine: machine(sbx) };
      } catch (error) {
        throw fail(error, "create");
      }
    },

    async find(request) {
      try {
        const found = await sdk.list(metadata(request));
        return found.find((s) => s.state === "running")?.sandboxId ?? found[0]?.sandboxId;
      } catch (error) {
        throw fail(error, "list");
      }
    },

    async open(ref) {
      try {
        // The TTL is always sent: without it Novita resets the sandbox to 5 minutes.
        return machine(await sdk.connect(ref, { timeoutMs: ttlMs }));
      } catch (error) {
        throw fail(error, `connect ${ref}`);
      }
    },

    async state(ref): Promise<SandboxStatus> {
      try {
        return (await sdk.getState(ref)) === "paused" ? "stopped" : "running";
      } catch (error) {
        if (sdk.errors.sandboxNotFound(error)) return "missing";
        throw fail(error, `info ${ref}`);
      }
    },

    async pause(ref) {
      try {
        await sdk.pause(ref);
      } catch (error) {
        throw fail(error, `pause ${ref}`);
      }
    },

    async kill(ref) {
      try {
        await sdk.kill(ref);
      } catch (error) {
        if (sdk.errors.sandboxNotFound(error)) return;
        throw fail(error, `kill ${ref}`);
      }
    },
  };
}
