import type { Caller, ServiceContext } from "../context.ts";
import { assertFence } from "../runs/leases.ts";
import { viaProvider } from "../sandbox-errors.ts";
import { requireComputer } from "./access.ts";
import { requireBotOnComputer, touchComputer } from "./activity.ts";
import { ensureBotFolder, resolveWorkspacePath } from "./bot-folders.ts";
import { machineFor } from "./first-use.ts";

export interface ExecComputerInput {
  readonly computerId: string;
  readonly argv: readonly string[];
  readonly cwd?: string;
  readonly env?: Readonly<Record<string, string>>;
  readonly stdin?: string;
  readonly timeoutMs?: number;
  /** A run's shell call names its bot and lease; a superseded lease is refused (CMP-3). */
  readonly lease?: { readonly botId: string; readonly fencingToken: number };
}

export interface ExecComputerResult {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
  readonly timedOut: boolean;
  /** True when stdout or stderr was cut to `MAX_OUTPUT_CHARS` (the tail is kept). */
  readonly truncated: boolean;
}

export const MAX_OUTPUT_CHARS = 1_000_000;
export const DEFAULT_EXEC_TIMEOUT_MS = 120_000;

/** Runs one argv command in the computer's workspace (no shell unless argv asks for one). */
export async function execComputer(
  ctx: ServiceContext,
  caller: Caller,
  input: ExecComputerInput,
): Promise<ExecComputerResult> {
  const computer = await requireComputer(ctx, caller, input.computerId);
  if (input.lease) {
    await requireBotOnComputer(ctx, computer, input.lease.botId);
    await assertFence(ctx, { computerId: computer.id, ...input.lease });
  }
  const sandbox = await machineFor(ctx, computer);
  await touchComputer(ctx, computer.id);
  // A bot's shell starts in its own folder (CMP-1); its cwd is relative to that folder.
  let cwd = input.cwd;
  if (input.lease) {
    cwd = resolveWorkspacePath(computer, input.lease.botId, input.cwd ?? "");
    await ensureBotFolder(sandbox, computer, input.lease.botId);
  }
  const result = await viaProvider(() =>
    sandbox.exec({
      argv: input.argv,
      ...(cwd !== undefined ? { cwd } : {}),
      ...(input.env !== undefined ? { env: input.env } : {}),
      ...(input.stdin !== undefined ? { stdin: input.stdin } : {}),
      timeoutMs: input.timeoutMs ?? DEFAULT_EXEC_TIMEOUT_MS,
    }),
  );
  const truncated = result.stdout.length > MAX_OUTPUT_CHARS || result.stderr.length > MAX_OUTPUT_CHARS;
  return {
    exitCode: result.exitCode,
    stdout: result.stdout.slice(-MAX_OUTPUT_CHARS),
    stderr: result.stderr.slice(-MAX_OUTPUT_CHARS),
    timedOut: result.timedOut,
    truncated,
  };
}
