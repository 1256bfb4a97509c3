/**
 * The supervisor's process manager: commands started in the computer, each in its own
 * process group, through the launcher of @rakazo/protocol (`execLauncherArgv`).
 *
 * - Background processes (`process.start/read/kill`): output of both streams goes into one
 *   bounded log per process (`OutputLog`, the last `bufferBytes`, 1 MiB by default) with
 *   monotonically increasing byte offsets; a reader asks for everything since an offset and is
 *   told how many bytes it lost to the bound. At most `maxRunning` run at once (`PROCESS_LIMIT`
 *   past that); exited ones stay readable until `maxExited` newer ones have exited.
 * - Handles are random (128 bits) and bound to the owner that started them: another owner naming
 *   one gets `PROCESS_NOT_FOUND`, exactly like an unknown handle.
 * - `killAll` (daemon shutdown) SIGKILLs every group, running or not.
 * - `spawnInWorkspace` is also what the foreground exec route (exec-route.ts) runs.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { constants } from "node:os";
import path from "node:path";
import { execLauncherArgv, PROCESS_ERROR_CODES, type SupervisorResult } from "@rakazo/protocol";
import { SupervisorError } from "../errors.ts";

export type OutputStream = "stdout" | "stderr";
type ReadResult = SupervisorResult<"process.read">;

/** The length of `data` up to its last complete UTF-8 character (an incomplete tail is held back). */
export function completeUtf8Length(data: Buffer): number {
  for (let back = 1; back <= Math.min(3, data.length); back += 1) {
    const byte = data[data.length - back] as number;
    if ((byte & 0xc0) === 0x80) continue; // continuation byte: look further back
    const need = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return need > back ? data.length - back : data.length;
  }
  return data.length;
}

interface Chunk {
  readonly stream: OutputStream;
  readonly offset: number;
  readonly data: Buffer;
}

/** Both streams of one process, in order, bounded to the last `limit` bytes (whole chunks). */
export class OutputLog {
  readonly #limit: number;
  readonly #chunks: Chunk[] = [];
  #bytes = 0;
  #end = 0;

  constructor(limit: number) {
    this.#limit = limit;
  }

  /** The offset after the last byte ever appended. */
  get end(): number {
    return this.#end;
  }

  /** The offset of the oldest byte still held. */
  get start(): number {
    return this.#chunks[0]?.offset ?? this.#end;
  }

  append(stream: OutputStream, data: Buffer): void {
    if (data.length === 0) return;
    // A chunk larger than the bound keeps only its tail (and starts where that tail starts).
    const kept = data.length > this.#limit ? data.subarray(data.length - this.#limit) : data;
    this.#chunks.push({ stream, offset: this.#end + data.length - kept.length, data: kept });
    this.#bytes += kept.length;
    this.#end += data.length;
    while (this.#bytes > this.#limit) {
      const oldest = this.#chunks.shift() as Chunk;
      this.#bytes -= oldest.data.length;
    }
  }

  /** Everything from `since` on; `since` past the end reads nothing and `next` stays at the end. */
  read(since: number): Pick<ReadResult, "chunks" | "next" | "dropped"> {
    const from = Math.min(since, this.#end);
    const dropped = Math.max(0, this.start - from);
    const chunks: ReadResult["chunks"] = [];
    for (const chunk of this.#chunks) {
      const skip = from - chunk.offset;
      if (skip >= chunk.data.length) continue;
      const data = skip > 0 ? chunk.data.subarray(skip) : chunk.data;
      chunks.push({
        stream: chunk.stream,
        offset: chunk.offset + Math.max(skip, 0),
        data: data.toString("utf8"),
      });
    }
    return { chunks, next: this.#end, dropped };
  }
}

/** Starts argv in `cwd` (workspace-relative) in its own process group, as the supervisor's user. */
export function spawnInWorkspace(
  workspace: string,
  request: { argv: readonly string[]; cwd: string; env?: Readonly<Record<string, string>> | undefined },
  stdin: boolean,
): ChildProcess {
  const folder = path.resolve(workspace, request.cwd);
  if (folder !== workspace && !folder.startsWith(`${workspace}/`)) {
    throw new SupervisorError("INVALID_ACTION", "a command's folder must be inside the workspace");
  }
  const [command, ...args] = execLauncherArgv(folder, request.argv);
  return spawn(command as string, args, {
    cwd: "/",
    env: { ...process.env, ...request.env },
    detached: true,
    stdio: [stdin ? "pipe" : "ignore", "pipe", "pipe"],
  });
}

/** Signals a process group; false when it is gone. */
export function signalGroup(pid: number | undefined, signal: NodeJS.Signals): boolean {
  if (pid === undefined) return false;
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false;
  }
}

/** A shell-style exit code: the code, or 128 + the signal's number. */
export function exitCodeOf(code: number | null, signal: NodeJS.Signals | null): number {
  if (code !== null) return code;
  return 128 + ((signal && constants.signals[signal]) || 1);
}

interface Managed {
  readonly handle: string;
  readonly owner: string;
  readonly child: ChildProcess;
  readonly log: OutputLog;
  exit: { code: number | null; signal: NodeJS.Signals | null } | null;
  readonly waiters: Set<() => void>;
}

export interface ProcessManagerOptions {
  readonly workspace: string;
  readonly maxRunning?: number;
  readonly maxExited?: number;
  readonly bufferBytes?: number;
}

export class ProcessManager {
  readonly #options: Required<ProcessManagerOptions>;
  readonly #processes = new Map<string, Managed>();
  /** Handles of exited processes, oldest first. */
  readonly #exited: string[] = [];

  constructor(options: ProcessManagerOptions) {
    this.#options = { maxRunning: 16, maxExited: 32, bufferBytes: 1024 * 1024, ...options };
  }

  get running(): number {
    let count = 0;
    for (const managed of this.#processes.values()) if (managed.exit === null) count += 1;
    return count;
  }

  start(request: {
    owner: string;
    argv: readonly string[];
    cwd: string;
    env?: Readonly<Record<string, string>> | undefined;
  }): { handle: string; pid: number } {
    if (this.running >= this.#options.maxRunning) {
      throw new SupervisorError(
        PROCESS_ERROR_CODES.limit,
        `${this.#options.maxRunning} background processes are running; kill one or wait for one to exit`,
        { limit: this.#options.maxRunning },
      );
    }
    const child = spawnInWorkspace(this.#options.workspace, request, false);
    const managed: Managed = {
      handle: `prc_${randomBytes(16).toString("hex")}`,
      owner: request.owner,
      child,
      log: new OutputLog(this.#options.bufferBytes),
      exit: null,
      waiters: new Set(),
    };
    const wake = (): void => {
      for (const waiter of managed.waiters) waiter();
      managed.waiters.clear();
    };
    for (const stream of ["stdout", "stderr"] as const) {
      let carry: Buffer = Buffer.alloc(0);
      child[stream]?.on("data", (chunk: Buffer) => {
        const data = carry.length > 0 ? Buffer.concat([carry, chunk]) : chunk;
        const complete = completeUtf8Length(data);
        carry = Buffer.from(data.subarray(complete));
        managed.log.append(stream, data.subarray(0, complete));
        wake();
      });
      child[stream]?.on("end", () => {
        managed.log.append(stream, carry);
        wake();
      });
    }
    const exited = (code: number | null, signal: NodeJS.Signals | null): void => {
      if (managed.exit) return;
      managed.exit = { code, signal };
      this.#exited.push(managed.handle);
      while (this.#exited.length > this.#options.maxExited) {
        this.#processes.delete(this.#exited.shift() as string);
      }
      wake();
    };
    child.on("exit", exited);
    // spawn failures (the launcher itself missing) end the process like an exit 127.
    child.on("error", () => exited(127, null));
    this.#processes.set(managed.handle, managed);
    return { handle: managed.handle, pid: child.pid ?? -1 };
  }

  async read(request: { owner: string; handle: string; since: number; waitMs: number }): Promise<ReadResult> {
    const managed = this.#find(request.owner, request.handle);
    if (request.waitMs > 0 && managed.exit === null && managed.log.end <= request.since) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, request.waitMs);
        function done(): void {
          clearTimeout(timer);
          managed.waiters.delete(done);
          resolve();
        }
        managed.waiters.add(done);
      });
    }
    return {
      ...managed.log.read(request.since),
      running: managed.exit === null,
      exitCode: managed.exit ? exitCodeOf(managed.exit.code, managed.exit.signal) : null,
      signal: managed.exit?.signal ?? null,
    };
  }

  kill(request: { owner: string; handle: string; signal: NodeJS.Signals }): {
    signalled: boolean;
    running: boolean;
  } {
    const managed = this.#find(request.owner, request.handle);
    // The group may outlive its leader (background children): it is signalled either way.
    const signalled = signalGroup(managed.child.pid, request.signal);
    return { signalled, running: managed.exit === null };
  }

  /** SIGKILLs every group this manager started (daemon shutdown). */
  killAll(): void {
    for (const managed of this.#processes.values()) signalGroup(managed.child.pid, "SIGKILL");
  }

  #find(owner: string, handle: string): Managed {
    const managed = this.#processes.get(handle);
    if (!managed || managed.owner !== owner) {
      throw new SupervisorError(PROCESS_ERROR_CODES.notFound, "no such process");
    }
    return managed;
  }
}
