/**
 * The per-provider surface of a remote computer (CMP-8): the little a cloud sandbox service must
 * offer for the shared remote runtime (./remote-provider.ts) to give it everything else —
 * exec, workspace files and archives, supervised desktops, the page browser and screens.
 *
 * A backend owns lifecycle (create, find, open, pause, kill, state); an open `RemoteMachine`
 * runs shell commands as the workspace user, reads and writes files by absolute path, and names
 * the URL of a port with the provider's auth kept server-side. Backends translate their SDK's
 * errors into `SandboxError`s: a missing machine is `SANDBOX_GONE`, a paused one
 * `SANDBOX_NOT_RUNNING`, a missing file `FILE_NOT_FOUND`, anything else
 * `SANDBOX_PROVIDER_ERROR` (with the provider's status in `details.status` where it has one).
 */
import type { ComputerMode, ComputerSizing, ProviderKind, SandboxStatus } from "../provider.ts";

export interface RemoteCommand {
  /** Shell text, run by `/bin/bash -c` (or the provider's equivalent) as the workspace user. */
  readonly command: string;
  /**
   * The provider-side deadline; 0 = none. The runtime passes its own deadline plus a margin
   * (it enforces timeouts in the machine with coreutils `timeout`), so a backend must never
   * apply an SDK default instead (E2B and Novita cut commands at 60 s unless told 0).
   */
  readonly timeoutMs: number;
  /** Streamed output as it arrives, where the provider streams; else once at the end. */
  readonly onOutput?: (stream: "stdout" | "stderr", data: string) => void;
}

export interface RemoteCommandResult {
  /** Any exit code is a result, never an exception (E2B/Novita throw on non-zero). */
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Where the host reaches a port of the machine: provider auth travels in headers, server-side only. */
export interface RemotePortTarget {
  /** http(s) base URL, no trailing slash. */
  readonly url: string;
  readonly headers?: Readonly<Record<string, string>>;
}

export interface RemoteMachine {
  run(command: RemoteCommand): Promise<RemoteCommandResult>;
  /** Reads a file by absolute path; `FILE_NOT_FOUND` when absent. */
  readFile(path: string): Promise<Uint8Array>;
  /** Writes (creates or replaces) a file by absolute path; parents exist. */
  writeFile(path: string, data: Uint8Array): Promise<void>;
  portUrl(port: number): Promise<RemotePortTarget>;
}

export interface RemoteCreateRequest {
  readonly computerId: string;
  readonly homeKey: string;
  readonly mode: ComputerMode;
  readonly sizing?: ComputerSizing;
}

export interface RemoteBackend {
  readonly kind: ProviderKind;
  /** Absolute path of the persistent workspace in every machine of this backend (PER-1). */
  readonly workspace: string;
  /** The machine's unprivileged user's home (supervisor bundle and run dir live below it). */
  readonly userHome: string;
  /**
   * Creates a running machine labelled with the computer and home; returns its opaque ref and a
   * handle to it made from the create's own answer (no second round trip to open it).
   */
  create(request: RemoteCreateRequest): Promise<{ readonly ref: string; readonly machine: RemoteMachine }>;
  /** A live (running or paused) machine labelled with this computer and home, if any. */
  find(request: RemoteCreateRequest): Promise<string | undefined>;
  /**
   * Connects to the machine, resuming it when paused, and returns a handle with fresh
   * credentials (never a cached one from before a pause). `SANDBOX_GONE` when missing.
   */
  open(ref: string): Promise<RemoteMachine>;
  state(ref: string): Promise<SandboxStatus>;
  /** Pauses, keeping the filesystem. `SANDBOX_GONE` when missing; a paused machine stays paused. */
  pause(ref: string): Promise<void>;
  /** Removes the machine; idempotent. */
  kill(ref: string): Promise<void>;
}

/**
 * Thrown by a `RemoteMachine` whose credentials the provider refuses (e.g. envd answers 401 to
 * a cached handle): the runtime drops the handle, opens the machine again and retries the call
 * once. Never reaches callers.
 */
export class StaleMachineError extends Error {
  override readonly name = "StaleMachineError";
}
