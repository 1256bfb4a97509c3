/**
 * Background commands on an external computer: started on the computer's process
 * manager (the supervisor's), read by offset, killed as a group. Handles are owned by
 * `external:<computerId>`, so a handle is found only through the computer that started it; a
 * handle of another computer (or none) answers NOT_FOUND like a missing computer does.
 */
import type { ProcessRead, SandboxProcesses } from "@rakazo/sandbox";
import { touchComputer } from "../computers/activity.ts";
import { machineFor } from "../computers/first-use.ts";
import type { ServiceContext } from "../context.ts";
import { AppError } from "../errors.ts";
import { viaProvider } from "../sandbox-errors.ts";
import { requireExternalComputer } from "./computers.ts";

async function processesOf(ctx: ServiceContext, computerId: string): Promise<SandboxProcesses> {
  const { row } = await requireExternalComputer(ctx, computerId);
  const sandbox = await machineFor(ctx, row);
  await touchComputer(ctx, row.id);
  if (!sandbox.processes) {
    throw new AppError("UNSUPPORTED", "this provider's computers do not run background commands");
  }
  return sandbox.processes;
}

const ownerOf = (computerId: string) => `external:${computerId}`;

export async function startExternalProcess(
  ctx: ServiceContext,
  input: {
    readonly computerId: string;
    readonly argv: readonly string[];
    readonly cwd?: string | undefined;
    readonly env?: Readonly<Record<string, string>> | undefined;
  },
): Promise<{ computerId: string; handle: string; pid: number }> {
  const processes = await processesOf(ctx, input.computerId);
  const started = await viaProvider(() =>
    processes.start({
      owner: ownerOf(input.computerId),
      argv: input.argv,
      ...(input.cwd !== undefined ? { cwd: input.cwd } : {}),
      ...(input.env !== undefined ? { env: input.env } : {}),
    }),
  );
  return { computerId: input.computerId, handle: started.handle, pid: started.pid };
}

export async function readExternalProcess(
  ctx: ServiceContext,
  input: {
    readonly computerId: string;
    readonly handle: string;
    readonly since: number;
    readonly waitMs: number;
  },
): Promise<ProcessRead> {
  const processes = await processesOf(ctx, input.computerId);
  return viaProvider(() =>
    processes.read({
      owner: ownerOf(input.computerId),
      handle: input.handle,
      since: input.since,
      waitMs: input.waitMs,
    }),
  );
}

export async function killExternalProcess(
  ctx: ServiceContext,
  input: {
    readonly computerId: string;
    readonly handle: string;
    readonly signal: "SIGTERM" | "SIGKILL" | "SIGINT" | "SIGHUP";
  },
): Promise<{ signalled: boolean; running: boolean }> {
  const processes = await processesOf(ctx, input.computerId);
  return viaProvider(() =>
    processes.kill({ owner: ownerOf(input.computerId), handle: input.handle, signal: input.signal }),
  );
}
