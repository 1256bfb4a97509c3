/**
 * Commands the supervisor runs: background processes (`process.*` methods of the
 * table) and the foreground exec route, `POST /exec`, which streams its output as NDJSON.
 *
 * Every command starts through the same tiny launcher the host's `docker exec` path uses,
 * `sh -c 'cd -- "$1" || exit 1; shift; exec "$@"'`: the argv is passed as arguments, never parsed
 * by a shell; an unknown command exits 127 and a missing folder 1, as a shell would answer.
 */
import { z } from "zod";

export const EXEC_LAUNCHER = 'cd -- "$1" || exit 1; shift; exec "$@"';

/** `/bin/sh -c <launcher> rakazo-exec <cwd> <argv…>` (cwd absolute, inside the computer). */
export function execLauncherArgv(cwd: string, argv: readonly string[]): string[] {
  return ["/bin/sh", "-c", EXEC_LAUNCHER, "rakazo-exec", cwd, ...argv];
}

/** Stable error codes of the process methods. */
export const PROCESS_ERROR_CODES = {
  /** Unknown handle, or one started by another owner: the same answer for both. */
  notFound: "PROCESS_NOT_FOUND",
  /** The cap on concurrent background processes is reached; nothing was started. */
  limit: "PROCESS_LIMIT",
} as const;

const envSchema = z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), z.string().max(100_000));
const argvSchema = z.array(z.string().max(100_000)).min(1).max(1_000).readonly();
/** Who started a process; only the same owner can name it again (e.g. `external:<computerId>`). */
const owner = z.string().min(1).max(200);
const handle = z.string().regex(/^prc_[0-9a-f]{32}$/, "expected a process handle (prc_…)");
export const processHandleSchema = handle;

export const processChunkSchema = z.object({
  stream: z.enum(["stdout", "stderr"]),
  /** Byte offset of the chunk's first byte in the process's output (both streams, in order). */
  offset: z.number().int().min(0),
  /** UTF-8 text; chunks are cut at character boundaries. */
  data: z.string(),
});

export const processReadResultSchema = z.object({
  chunks: z.array(processChunkSchema),
  /** Pass as `since` to read on: the offset after the last byte returned. */
  next: z.number().int().min(0),
  /** Bytes between `since` and the oldest byte still buffered (lost to the bound). */
  dropped: z.number().int().min(0),
  running: z.boolean(),
  exitCode: z.number().int().nullable(),
  signal: z.string().nullable(),
});

export const PROCESS_METHODS = {
  /** Starts a background command in its own process group; `cwd` is workspace-relative. */
  "process.start": {
    params: z.object({
      owner,
      argv: argvSchema,
      cwd: z.string().max(4_096).default(""),
      env: envSchema.optional(),
    }),
    result: z.object({ handle, pid: z.number().int() }),
  },
  /**
   * Output from byte offset `since` on; waits up to `waitMs` for new output or the exit when
   * there is none yet (the long poll that streams).
   */
  "process.read": {
    params: z.object({
      owner,
      handle,
      since: z.number().int().min(0).default(0),
      waitMs: z.number().int().min(0).max(30_000).default(0),
    }),
    result: processReadResultSchema,
  },
  /** Signals the whole process group (default SIGTERM). */
  "process.kill": {
    params: z.object({
      owner,
      handle,
      signal: z.enum(["SIGTERM", "SIGKILL", "SIGINT", "SIGHUP"]).default("SIGTERM"),
    }),
    result: z.object({ signalled: z.boolean(), running: z.boolean() }),
  },
} as const satisfies Record<string, { params: z.ZodType; result: z.ZodType }>;

/** The body of `POST /exec`. */
export const execRequestSchema = z.object({
  argv: argvSchema,
  /** Workspace-relative. */
  cwd: z.string().max(4_096).default(""),
  env: envSchema.optional(),
  stdinBase64: z.string().optional(),
  timeoutMs: z.number().int().min(1).optional(),
});
export type ExecRequestWire = z.input<typeof execRequestSchema>;

/** One NDJSON line of the `/exec` answer: output, then exactly one `exit` or `error` line. */
export type ExecFrame =
  | { readonly stream: "stdout" | "stderr"; readonly data: string /* base64 */ }
  | { readonly exit: { readonly exitCode: number; readonly timedOut: boolean } }
  | { readonly error: { readonly code: string; readonly message: string } };
