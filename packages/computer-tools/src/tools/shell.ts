/** shell (TOOL-1): one command in the workspace under the run's lease. Recorded with its output tail (TOOL-4). */
import { execComputer } from "@rakazo/services";
import { fence } from "../session.ts";
import { defineTool, mutate, shellLine, type ToolFactory, text } from "./common.ts";

/** How much of each stream the model sees (the end, where errors are). */
const SHELL_OUTPUT_CHARS = 20_000;

export const shell: ToolFactory = (session) =>
  defineTool(
    "shell",
    "Run a command",
    "Run a command in your computer's workspace and get its exit code and output. Pass `command` " +
      "(run by sh -c) or `argv` (run directly, no quoting). Output is cut to its last 20000 characters. " +
      "You can keep running commands while a person controls your screen.",
    async (params) => {
      const argv = params.argv ?? (params.command !== undefined ? ["sh", "-c", params.command] : undefined);
      if (!argv || (params.argv && params.command !== undefined)) {
        throw new Error("pass exactly one of `command` or `argv`");
      }
      const commandLine = params.command ?? shellLine(argv);
      return mutate(
        session,
        "shell",
        params,
        async () => {
          const { botId, fencingToken, computerId } = fence(session);
          const result = await execComputer(session.ctx, session.caller, {
            computerId,
            argv,
            ...(params.cwd !== undefined ? { cwd: params.cwd } : {}),
            ...(params.timeoutSeconds !== undefined ? { timeoutMs: params.timeoutSeconds * 1000 } : {}),
            lease: { botId, fencingToken },
          });
          const parts = [
            `exit code ${result.exitCode}${result.timedOut ? " (timed out)" : ""}`,
            result.stdout ? `stdout:\n${result.stdout.slice(-SHELL_OUTPUT_CHARS)}` : "stdout: (empty)",
            result.stderr ? `stderr:\n${result.stderr.slice(-SHELL_OUTPUT_CHARS)}` : "",
          ];
          return {
            value: text(parts.filter(Boolean).join("\n"), {
              exitCode: result.exitCode,
              timedOut: result.timedOut,
            }),
            activity: {
              line: `$ ${commandLine} → exit ${result.exitCode}`,
              command: commandLine,
              exitCode: result.exitCode,
              // The two streams apart, so Activity shows errors as errors (TOOL-4).
              output: result.stdout,
              stderr: result.stderr,
              ok: result.exitCode === 0 && !result.timedOut,
            },
          };
        },
        () => ({ line: `$ ${commandLine}`, command: commandLine }),
      );
    },
  );
