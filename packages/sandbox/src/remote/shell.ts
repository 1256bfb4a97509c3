/**
 * Shell text the remote runtime sends through `RemoteMachine.run`: argv is always quoted into
 * single-quoted words, never interpolated. Pure; unit-tested.
 */
import { SandboxError } from "../errors.ts";

/** One POSIX single-quoted word. */
export function quote(word: string): string {
  if (word.includes("\0")) throw new SandboxError("INVALID_ACTION", "argument contains a NUL byte");
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

export function quoteArgv(argv: readonly string[]): string {
  return argv.map(quote).join(" ");
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Seconds after TERM at the deadline before `timeout` sends KILL (as the Docker adapter). */
const KILL_AFTER_SECONDS = 2;

export interface CommandLine {
  readonly argv: readonly string[];
  /** Absolute working directory. */
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
  /** coreutils `timeout` deadline; absent = none. */
  readonly timeoutMs?: number;
  /** An absolute file to open as stdin and unlink at once; absent = /dev/null. */
  readonly stdinFile?: string;
}

/**
 * `cd` into the working directory (exit 1 when it is missing), stdin from the staged file (then
 * unlinked, the descriptor stays open) or /dev/null, and `exec env … [timeout …] argv`: unknown
 * commands exit 127, a deadline exits 124 and signals the command's whole process group.
 */
export function commandLine(line: CommandLine): string {
  if (line.argv.length === 0) throw new SandboxError("SANDBOX_PROVIDER_ERROR", "exec needs a non-empty argv");
  const env = Object.entries(line.env).map(([name, value]) => {
    if (!ENV_NAME.test(name))
      throw new SandboxError("INVALID_ACTION", `invalid environment name ${JSON.stringify(name)}`);
    return quote(`${name}=${value}`);
  });
  const timeout =
    line.timeoutMs === undefined
      ? []
      : ["timeout", "-k", String(KILL_AFTER_SECONDS), `${Math.max(line.timeoutMs, 1) / 1000}s`];
  const stdin =
    line.stdinFile === undefined
      ? "exec 0</dev/null"
      : `exec 0<${quote(line.stdinFile)} && rm -f -- ${quote(line.stdinFile)}`;
  return [
    `cd -- ${quote(line.cwd)} || exit 1`,
    stdin,
    `exec env ${env.join(" ")} ${quoteArgv([...timeout, ...line.argv])}`,
  ].join("\n");
}
