/**
 * The shared remote-computer runtime (CMP-8): one `SandboxProvider` written once over a
 * `RemoteBackend` (./surface.ts). Everything but lifecycle goes through three machine verbs —
 * run a command, read/write a file, the URL of a port:
 * - exec: argv quoted into one shell line (./shell.ts) under coreutils `timeout`; stdin staged as
 *   a file; the backend never applies an SDK default deadline.
 * - files: the in-machine workspace script (../workspace-script.ts), paths confined with realpath;
 *   archives validated on the host (`extractArchive`, PER-6) before they reach the machine.
 * - desktops, page browser, screens, the browser terminal and background commands: the
 *   supervisor bundle is installed into the machine at provision (content-addressed, checked by
 *   sha256) and driven through its persistent channel (./supervisor-channel.ts), the command
 *   path as the way in and the fallback for calls safe to repeat; every bot desktop is a
 *   supervisor slot, never the provider's own desktop. Its screen gateway, which also serves
 *   the terminal route (`/v1/pty`, TRM-4), listens on a TCP port the provider hosts; the web
 *   proxy reaches it with the provider's auth in headers, server-side only (SCR-4).
 * Handles are cached per ref; a handle whose credentials the provider refuses
 * (`StaleMachineError`) is dropped and opened afresh, once.
 */
import { createHash, randomBytes } from "node:crypto";
import { SUPERVISOR_RPC_KEY_FILE } from "@rakazo/protocol";
import { type DesktopAdmissionSettings, desktopAdmissionEnv } from "../desktop-admission.ts";
import { isSandboxError, SandboxError } from "../errors.ts";
import { fileFailure } from "../file-script-exits.ts";
import { parseListing } from "../listing.ts";
import { normalizeWorkspacePath } from "../paths.ts";
import type {
  ExecRequest,
  ExecResult,
  ProviderCapabilities,
  Sandbox,
  SandboxFiles,
  SandboxProvider,
} from "../provider.ts";
import { createSupervisedDesktop } from "../supervised-desktop.ts";
import { createSupervisedPageBrowser } from "../supervised-page-browser.ts";
import { createSupervisedProcesses } from "../supervised-processes.ts";
import { createSupervisedScreens } from "../supervised-screens.ts";
import { createSupervisedTerminal } from "../supervised-terminal.ts";
import { commandTransport, type SupervisorTransport } from "../supervisor-client.ts";
import { persistentToolEnv } from "../tool-env.ts";
import { workspaceScriptCommand } from "../workspace-script.ts";
import { commandLine } from "./shell.ts";
import { supervisorChannel } from "./supervisor-channel.ts";
import { startOnKnownMachine, startOnNewMachine } from "./supervisor-start.ts";
import { type RemoteBackend, type RemoteMachine, StaleMachineError } from "./surface.ts";
import { exportWorkspaceChunked, importWorkspaceChunked } from "./workspace-transfer.ts";

export interface RemoteProviderOptions {
  readonly backend: RemoteBackend;
  /** The supervisor bundle (`supervisor.mjs`), installed into every machine at provision. */
  readonly supervisorBundle: () => Promise<Uint8Array>;
  /** How the machine runs Node; default `node`. */
  readonly nodeCommand?: string;
  /** The in-machine port of the screen gateway; default 8790. */
  readonly gatewayPort?: number;
  /** SANDBOX_TEAM_SCREEN_LIMIT for the supervisor; 0 = none. */
  readonly screenLimit?: number;
  /** The supervisor's desktop admission (CMP-5), in its environment; unset fields keep its defaults. */
  readonly desktopAdmission?: DesktopAdmissionSettings;
  /**
   * Where the machines' image may carry the supervisor bundle (`/opt/rakazo/supervisor.mjs` in a
   * template, snapshot or type built from the computer image): a new machine whose copy there
   * passes the sha256 check gets no upload. Unset: every new machine gets the upload.
   */
  readonly supervisorInImage?: string;
  /** Per supervisor call; observe of a new bot starts a desktop. Default 120 s. */
  readonly supervisorTimeoutMs?: number;
  readonly capabilities?: Partial<ProviderCapabilities>;
}

/** Extra provider-side time past the in-machine `timeout` before the backend gives up. */
const BACKSTOP_MS = 15_000;
const DEFAULT_MAX_READ = 64 * 1024 ** 2;

export function createRemoteProvider(options: RemoteProviderOptions): SandboxProvider {
  const { backend } = options;
  const workspace = backend.workspace;
  const gatewayPort = options.gatewayPort ?? 8790;
  const node = options.nodeCommand ?? "node";
  // The daemon the CLI starts inherits the CLI's environment (`env` sets it in the machine).
  const admissionEnv = Object.entries(desktopAdmissionEnv(options.desktopAdmission)).map(
    ([name, value]) => `${name}=${value}`,
  );
  const machines = new Map<string, Promise<RemoteMachine>>();
  /** One supervisor channel per machine (./supervisor-channel.ts), shared by its handles. */
  const channels = new Map<string, SupervisorTransport>();
  /** The RPC key a start printed, used once by the channel's opening instead of a file read and a probe. */
  const startKeys = new Map<string, Uint8Array>();
  let bundle: Promise<{ bytes: Uint8Array; path: string; hash: string }> | undefined;

  const supervisorBundle = () => {
    bundle ??= options.supervisorBundle().then((bytes) => {
      const hash = createHash("sha256").update(bytes).digest("hex");
      return { bytes, path: `${backend.userHome}/.rakazo/supervisor-${hash.slice(0, 16)}.mjs`, hash };
    });
    return bundle;
  };

  const evict = (ref: string) => machines.delete(ref);
  /** A machine stopped, destroyed or provisioned again: its supervisor channel is opened afresh. */
  const forget = (ref: string) => {
    evict(ref);
    channels.delete(ref);
    startKeys.delete(ref);
  };

  /** A cached handle, or a fresh one for a running machine: never resumes a stopped one. */
  const handle = async (ref: string): Promise<RemoteMachine> => {
    const cached = machines.get(ref);
    if (cached) return cached;
    const state = await backend.state(ref);
    if (state === "missing") throw new SandboxError("SANDBOX_GONE", `machine ${ref} is gone`);
    if (state === "stopped") throw new SandboxError("SANDBOX_NOT_RUNNING", `machine ${ref} is stopped`);
    const opening = backend.open(ref);
    machines.set(ref, opening);
    opening.catch(() => evict(ref));
    return opening;
  };

  /** Runs `fn` on the machine; a stale handle is replaced once, a vanished one re-classified. */
  const withMachine = async <T>(ref: string, fn: (machine: RemoteMachine) => Promise<T>): Promise<T> => {
    for (let attempt = 0; ; attempt += 1) {
      const machine = await handle(ref);
      try {
        return await fn(machine);
      } catch (error) {
        if (error instanceof StaleMachineError) {
          evict(ref);
          if (attempt === 0) continue;
          throw new SandboxError("SANDBOX_PROVIDER_ERROR", `machine ${ref}: ${error.message}`, {
            cause: error,
          });
        }
        if (isSandboxError(error, "SANDBOX_GONE") || isSandboxError(error, "SANDBOX_NOT_RUNNING")) {
          evict(ref);
          const state = await backend.state(ref);
          if (state === "stopped") throw new SandboxError("SANDBOX_NOT_RUNNING", `machine ${ref} is stopped`);
          if (state === "missing") throw new SandboxError("SANDBOX_GONE", `machine ${ref} is gone`);
          if (attempt === 0) continue;
        }
        throw error;
      }
    }
  };

  const exec = async (ref: string, request: ExecRequest): Promise<ExecResult> => {
    const cwd = normalizeWorkspacePath(request.cwd ?? "");
    return withMachine(ref, async (machine) => {
      let stdinFile: string | undefined;
      if (request.stdin !== undefined) {
        stdinFile = `/tmp/.rakazo-stdin-${randomBytes(8).toString("hex")}`;
        const data = typeof request.stdin === "string" ? Buffer.from(request.stdin) : request.stdin;
        await machine.writeFile(stdinFile, new Uint8Array(data));
      }
      const command = commandLine({
        argv: request.argv,
        cwd: cwd === "" ? workspace : `${workspace}/${cwd}`,
        env: { ...persistentToolEnv(workspace), HOME: backend.userHome, ...(request.env ?? {}) },
        ...(request.timeoutMs !== undefined ? { timeoutMs: request.timeoutMs } : {}),
        ...(stdinFile !== undefined ? { stdinFile } : {}),
      });
      const started = Date.now();
      const onOutput = request.onOutput;
      const result = await machine.run({
        command,
        timeoutMs: request.timeoutMs === undefined ? 0 : request.timeoutMs + BACKSTOP_MS,
        ...(onOutput ? { onOutput: (stream, data) => onOutput({ stream, data }) } : {}),
      });
      // `timeout` exits 124 (TERM worked) or 137 (KILL was needed); a command that exits 124 by
      // itself before the deadline is not a timeout.
      const timedOut =
        request.timeoutMs !== undefined &&
        (result.exitCode === 124 || result.exitCode === 137) &&
        Date.now() - started >= request.timeoutMs;
      return {
        exitCode: timedOut ? 124 : result.exitCode,
        stdout: result.stdout,
        stderr: result.stderr,
        timedOut,
      };
    });
  };

  /** The workspace script; a non-zero exit becomes its stable code. */
  const fileOp = (machine: RemoteMachine, op: string, rel: string, ...args: string[]) =>
    machine
      .run({ command: workspaceScriptCommand(workspace, op, [rel, ...args]), timeoutMs: 0 })
      .then((result) => {
        if (result.exitCode !== 0) throw fileFailure(result.exitCode, op, rel, result.stderr);
        return result.stdout;
      });

  const files = (ref: string): SandboxFiles => ({
    async list(path) {
      const rel = normalizeWorkspacePath(path);
      const out = await withMachine(ref, (machine) => fileOp(machine, "list", rel));
      return parseListing(Buffer.from(out, "utf8"), rel);
    },
    async read(path, readOptions) {
      const rel = normalizeWorkspacePath(path);
      const max = readOptions?.maxBytes ?? DEFAULT_MAX_READ;
      return withMachine(ref, async (machine) => {
        const resolved = await fileOp(machine, "read", rel, String(max), "locate");
        return machine.readFile(resolved);
      });
    },
    async write(path, data) {
      const rel = normalizeWorkspacePath(path);
      if (rel === "") throw new SandboxError("INVALID_PATH", "cannot write the workspace root");
      const bytes = typeof data === "string" ? new Uint8Array(Buffer.from(data)) : data;
      await withMachine(ref, async (machine) => {
        const upload = `/tmp/.rakazo-upload-${randomBytes(8).toString("hex")}`;
        await machine.writeFile(upload, bytes);
        await fileOp(machine, "write", rel, upload);
      });
    },
    // Chunked through the provider's file API, bounded memory (./workspace-transfer.ts).
    exportWorkspace: () => exportWorkspaceChunked((fn) => withMachine(ref, fn), fileOp),
    importWorkspace: (tar) => importWorkspaceChunked((fn) => withMachine(ref, fn), fileOp, tar),
  });

  const runDir = `${backend.userHome}/.rakazo/run`;
  const timeoutMs = options.supervisorTimeoutMs ?? 120_000;

  /**
   * The command path: one `node supervisor.mjs <method>` in the machine, starting the daemon.
   * `prelude` is shell run first (installing the bundle); its exit code, if not 0, is the call's,
   * and `onExit` sees it.
   */
  const commandPath = (ref: string, prelude?: string, onExit?: (code: number) => void): SupervisorTransport =>
    commandTransport(
      async (argv) => {
        const { path } = await supervisorBundle();
        const [, , method, params] = argv;
        const cli = [
          ...(admissionEnv.length > 0 ? ["env", ...admissionEnv] : []),
          node,
          path,
          method ?? "health",
          params ?? "{}",
          "--run-dir",
          runDir,
          "--workspace",
          workspace,
          "--gateway-listen",
          `tcp:0.0.0.0:${gatewayPort}`,
          "--screen-limit",
          String(options.screenLimit ?? 0),
        ];
        const result = await exec(ref, {
          argv: prelude === undefined ? cli : ["sh", "-c", `${prelude} && exec "$@"`, "sh", ...cli],
          timeoutMs,
        });
        onExit?.(result.exitCode);
        return result;
      },
      { command: ["node", "supervisor"] },
    );

  const supervisorTransport = (ref: string): SupervisorTransport => ({
    call(method, params) {
      let channel = channels.get(ref);
      if (!channel) {
        channel = supervisorChannel({
          commands: commandPath(ref),
          target: () => withMachine(ref, (machine) => machine.portUrl(gatewayPort)),
          readKey: () =>
            withMachine(ref, (machine) => machine.readFile(`${runDir}/${SUPERVISOR_RPC_KEY_FILE}`)),
          startKey: () => {
            const printed = startKeys.get(ref);
            startKeys.delete(ref);
            return printed;
          },
          timeoutMs,
        });
        channels.set(ref, channel);
      }
      return channel.call(method, params);
    },
  });

  /** Makes the workspace directory and starts the daemon (./supervisor-start.ts). */
  const prepareAndStart = async (ref: string, fresh: boolean) => {
    const bundle = await supervisorBundle();
    const home = `${backend.userHome}/.rakazo`;
    if (fresh) {
      const key = await startOnNewMachine({
        settings: {
          runDir,
          workspace,
          gatewayPort,
          screenLimit: options.screenLimit ?? 0,
          admissionEnv,
          node,
        },
        bundle,
        ...(options.supervisorInImage !== undefined ? { inImage: options.supervisorInImage } : {}),
        dirs: [workspace, home],
        run: async (script) => exec(ref, { argv: ["sh", "-c", script], timeoutMs }),
        writeFile: (file, bytes) => withMachine(ref, (machine) => machine.writeFile(file, bytes)),
        viaCommandPath: () => commandPath(ref).call("health", {}),
        randomSuffix: () => randomBytes(6).toString("hex"),
      });
      if (key !== undefined) startKeys.set(ref, new Uint8Array(Buffer.from(key)));
      return;
    }
    await startOnKnownMachine({
      bundle,
      dirs: [workspace, home],
      commandPath: (prelude, onExit) => commandPath(ref, prelude, onExit),
      // The machine lost or never had this bundle: installed as on a new machine.
      install: () => prepareAndStart(ref, true),
    });
  };

  const capabilities: ProviderCapabilities = {
    desktop: true,
    pageBrowser: true,
    terminal: true,
    billsWhileRunning: true,
    networkModes: ["none"],
    mountsHome: false,
    defaultPageBrowser: "sandbox",
    ...options.capabilities,
  };

  return {
    kind: backend.kind,
    capabilities,

    async provision(request) {
      const create = {
        computerId: request.computerId,
        homeKey: request.homeKey,
        mode: request.mode,
        ...(request.sizing ? { sizing: request.sizing } : {}),
      };
      if (
        (request.network?.mode ?? "none") !== "none" &&
        !capabilities.networkModes?.includes(request.network?.mode ?? "none")
      ) {
        throw new SandboxError(
          "SANDBOX_UNSUPPORTED",
          `${backend.kind} computers support no network policy but none`,
        );
      }
      let ref: string | undefined;
      let opening: Promise<RemoteMachine> | undefined;
      if (request.ref && (await backend.state(request.ref)) !== "missing") ref = request.ref;
      ref ??= await backend.find(create);
      const replaced = ref === undefined;
      if (ref === undefined) {
        const created = await backend.create(create);
        ref = created.ref;
        opening = Promise.resolve(created.machine);
      }
      forget(ref);
      opening ??= backend.open(ref);
      machines.set(ref, opening);
      opening.catch(() => evict(ref));
      await opening;
      try {
        // The daemon starts now, so the first desktop call does not also pay for it. By the
        // command path: the supervisor channel opens on the first call after it.
        await prepareAndStart(ref, replaced);
      } catch (error) {
        // A machine this call made and could not prepare is not left behind.
        if (replaced) await backend.kill(ref).catch(() => undefined);
        throw error;
      }
      return { ref, replaced };
    },

    async stop(ref) {
      forget(ref);
      await backend.pause(ref);
    },

    async destroy(ref) {
      forget(ref);
      await backend.kill(ref);
    },

    status: (ref) => backend.state(ref),

    sandbox(ref): Sandbox {
      const transport = supervisorTransport(ref);
      return {
        ref,
        exec: (request) => exec(ref, request),
        files: files(ref),
        desktop: createSupervisedDesktop(transport),
        pageBrowser: createSupervisedPageBrowser(transport),
        // The PTY server beside the screen gateway (TRM-4, TRM-7), reached through `screens.target()`.
        ...createSupervisedTerminal(transport),
        // Background commands on the supervisor's process manager, as on Docker.
        processes: createSupervisedProcesses(transport),
        screens: createSupervisedScreens(transport, async () => {
          const target = await withMachine(ref, (machine) => machine.portUrl(gatewayPort));
          return {
            transport: "http",
            url: target.url,
            ...(target.headers ? { headers: { ...target.headers } } : {}),
          };
        }),
      };
    },
  };
}
