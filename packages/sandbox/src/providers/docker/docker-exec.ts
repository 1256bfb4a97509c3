/**
 * `docker exec` for the adapter: argv (no shell parsing), cwd, env, stdin, streamed and split
 * output, exit code, and timeouts.
 *
 * Every command starts through a tiny launcher, `sh -c 'cd -- "$1" && shift && exec "$@"'`:
 * the user's argv is passed as arguments, never parsed by a shell. The launcher gives the same
 * results as a shell would (127 for an unknown command, a readable error for a missing cwd),
 * where Docker itself answers 126 with an OCI runtime message.
 *
 * Timeouts: Docker has no API to kill an exec. With `timeoutMs`, the argv runs under coreutils
 * `timeout`, which puts the command in its own process group, sends TERM to the whole group at
 * the deadline and KILL two seconds later, and exits 124. A host-side backstop detaches from the
 * stream if the container does not end it shortly after.
 */
import { PassThrough, type Readable } from "node:stream";
import { EXEC_LAUNCHER } from "@rakazo/protocol";
import type Docker from "dockerode";
import { SandboxError } from "../../errors.ts";
import { WORKSPACE_USER } from "./container-spec.ts";

export interface RawExecRequest {
  readonly argv: readonly string[];
  /** Absolute path inside the container. */
  readonly cwd: string;
  readonly env?: Readonly<Record<string, string>>;
  readonly stdin?: string | Uint8Array;
  readonly timeoutMs?: number;
  readonly onStdout?: (chunk: Buffer) => void;
  readonly onStderr?: (chunk: Buffer) => void;
}

export interface RawExecResult {
  readonly exitCode: number;
  readonly stdout: Buffer;
  readonly stderr: Buffer;
  readonly timedOut: boolean;
}

/** Grace between TERM and KILL, and how long after that the host stops waiting. */
const KILL_AFTER_SECONDS = 2;
export const BACKSTOP_MS = (KILL_AFTER_SECONDS + 5) * 1000;

/** The argv handed to Docker for one command (pure; unit-tested). */
export function launcherArgv(argv: readonly string[], cwd: string, timeoutMs?: number): string[] {
  if (argv.length === 0) throw new SandboxError("SANDBOX_PROVIDER_ERROR", "exec needs a non-empty argv");
  const timed =
    timeoutMs === undefined
      ? []
      : ["timeout", "-k", String(KILL_AFTER_SECONDS), `${Math.max(timeoutMs, 1) / 1000}s`];
  return ["/bin/sh", "-c", EXEC_LAUNCHER, "rakazo-exec", cwd, ...timed, ...argv];
}

export function envList(env: Readonly<Record<string, string>> | undefined): string[] {
  return Object.entries(env ?? {}).map(([k, v]) => {
    if (k === "" || k.includes("=") || k.includes("\0") || v.includes("\0")) {
      throw new SandboxError(
        "SANDBOX_PROVIDER_ERROR",
        `invalid environment variable name ${JSON.stringify(k)}`,
      );
    }
    return `${k}=${v}`;
  });
}

/**
 * Splits Docker's multiplexed exec stream (8-byte header: stream type, 3 zero bytes, uint32 BE
 * length) into frames. Pure and incremental; keeps no more than one partial frame buffered.
 */
export function createDemuxer(onFrame: (stream: "stdout" | "stderr", data: Buffer) => void): {
  push(chunk: Buffer): void;
  pending(): number;
} {
  let buffered: Buffer = Buffer.alloc(0);
  return {
    push(chunk: Buffer) {
      buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
      let offset = 0;
      while (buffered.length - offset >= 8) {
        const type = buffered[offset];
        const size = buffered.readUInt32BE(offset + 4);
        if (buffered.length - offset - 8 < size) break;
        const data = buffered.subarray(offset + 8, offset + 8 + size);
        if (size > 0) onFrame(type === 2 ? "stderr" : "stdout", data);
        offset += 8 + size;
      }
      buffered = offset === 0 ? buffered : Buffer.from(buffered.subarray(offset));
    },
    pending: () => buffered.length,
  };
}

/** Maps dockerode errors to the sandbox's stable codes. */
export function mapDockerError(error: unknown, ref: string): SandboxError {
  if (error instanceof SandboxError) return error;
  const status = (error as { statusCode?: number } | null)?.statusCode;
  const message = error instanceof Error ? error.message : String(error);
  if (status === 404)
    return new SandboxError("SANDBOX_GONE", `container ${ref} does not exist`, { cause: error });
  if (status === 409 && /is not running|is paused|is restarting/i.test(message)) {
    return new SandboxError("SANDBOX_NOT_RUNNING", `container ${ref} is not running`, { cause: error });
  }
  return new SandboxError("SANDBOX_PROVIDER_ERROR", `docker: ${message}`, { cause: error });
}

async function openExec(
  docker: Docker,
  ref: string,
  request: RawExecRequest,
): Promise<{ exec: Docker.Exec; stream: NodeJS.ReadWriteStream }> {
  const container = docker.getContainer(ref);
  const hasStdin = request.stdin !== undefined;
  try {
    const exec = await container.exec({
      Cmd: launcherArgv(request.argv, request.cwd, request.timeoutMs),
      Env: envList(request.env),
      User: WORKSPACE_USER,
      AttachStdin: hasStdin,
      AttachStdout: true,
      AttachStderr: true,
      Tty: false,
    });
    const stream = (await exec.start({ hijack: true, stdin: hasStdin })) as NodeJS.ReadWriteStream;
    if (hasStdin) {
      const data =
        typeof request.stdin === "string" ? Buffer.from(request.stdin) : Buffer.from(request.stdin ?? []);
      // end() half-closes the hijacked connection, which Docker passes on as EOF on stdin.
      stream.end(data);
    }
    return { exec, stream };
  } catch (error) {
    throw mapDockerError(error, ref);
  }
}

/** The exit code once Docker has recorded it (it can lag the end of the stream briefly). */
async function exitCodeOf(exec: Docker.Exec, ref: string): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const info = await exec.inspect().catch((error: unknown) => {
      throw mapDockerError(error, ref);
    });
    if (!info.Running && info.ExitCode !== null) return info.ExitCode;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new SandboxError("SANDBOX_PROVIDER_ERROR", `exec in ${ref} ended without an exit code`);
}

export async function runExec(docker: Docker, ref: string, request: RawExecRequest): Promise<RawExecResult> {
  const started = Date.now();
  const { exec, stream } = await openExec(docker, ref, request);
  const stdout: Buffer[] = [];
  const stderr: Buffer[] = [];
  const demux = createDemuxer((kind, data) => {
    const copy = Buffer.from(data);
    if (kind === "stdout") {
      stdout.push(copy);
      request.onStdout?.(copy);
    } else {
      stderr.push(copy);
      request.onStderr?.(copy);
    }
  });

  let backstopFired = false;
  const finished = new Promise<void>((resolve, reject) => {
    stream.on("data", (chunk: Buffer) => demux.push(chunk));
    stream.on("end", () => resolve());
    stream.on("close", () => resolve());
    stream.on("error", (error: Error) => (backstopFired ? resolve() : reject(error)));
  });
  const backstop =
    request.timeoutMs === undefined
      ? undefined
      : setTimeout(() => {
          backstopFired = true;
          (stream as unknown as PassThrough).destroy();
        }, request.timeoutMs + BACKSTOP_MS);

  try {
    await finished;
  } catch (error) {
    throw mapDockerError(error, ref);
  } finally {
    if (backstop) clearTimeout(backstop);
  }

  const exitCode = backstopFired ? 124 : await exitCodeOf(exec, ref);
  // `timeout` exits 124 (TERM worked) or 137 (KILL was needed); a command that exits 124 by
  // itself before the deadline is not a timeout.
  const timedOut =
    request.timeoutMs !== undefined &&
    (backstopFired || ((exitCode === 124 || exitCode === 137) && Date.now() - started >= request.timeoutMs));
  return {
    exitCode: timedOut ? 124 : exitCode,
    stdout: Buffer.concat(stdout),
    stderr: Buffer.concat(stderr),
    timedOut,
  };
}

/**
 * Runs a command whose stdout is a stream (workspace export). The returned stream ends only
 * when the command exited 0; otherwise it is destroyed with `toError(exitCode, stderr)`, so a
 * reader never mistakes a truncated archive for a whole one. Backpressure reaches Docker.
 */
export async function startExecStream(
  docker: Docker,
  ref: string,
  request: RawExecRequest,
  toError: (exitCode: number, stderr: string) => Error,
): Promise<Readable> {
  const { exec, stream } = await openExec(docker, ref, request);
  const out = new PassThrough();
  const stderr: Buffer[] = [];
  const demux = createDemuxer((kind, data) => {
    if (kind === "stderr") {
      stderr.push(Buffer.from(data));
    } else if (!out.write(Buffer.from(data))) {
      stream.pause();
      out.once("drain", () => stream.resume());
    }
  });
  stream.on("data", (chunk: Buffer) => demux.push(chunk));
  stream.on("error", (error: Error) => out.destroy(mapDockerError(error, ref)));
  stream.on("end", () => {
    exitCodeOf(exec, ref).then(
      (code) => (code === 0 ? out.end() : out.destroy(toError(code, Buffer.concat(stderr).toString()))),
      (error: unknown) => out.destroy(mapDockerError(error, ref)),
    );
  });
  out.on("close", () => (stream as unknown as PassThrough).destroy());
  return out;
}
