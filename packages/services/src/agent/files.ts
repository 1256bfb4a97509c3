/** Fenced workspace file verbs for the agent's file tools (TOOL-1). Paths are workspace-relative. */
import type { FileEntry } from "@rakazo/sandbox";
import type { Caller, ServiceContext } from "../context.ts";
import { viaProvider } from "../sandbox-errors.ts";
import { type FencedTarget, fencedMachine } from "./fenced.ts";

/** The most a `read_file` call returns; larger files fail with FILE_TOO_LARGE. */
export const MAX_AGENT_READ_BYTES = 1_000_000;

export async function readAgentFile(
  ctx: ServiceContext,
  caller: Caller,
  input: FencedTarget & { path: string; maxBytes?: number },
): Promise<Uint8Array> {
  const { sandbox } = await fencedMachine(ctx, caller, input);
  return viaProvider(() =>
    sandbox.files.read(input.path, { maxBytes: input.maxBytes ?? MAX_AGENT_READ_BYTES }),
  );
}

export async function writeAgentFile(
  ctx: ServiceContext,
  caller: Caller,
  input: FencedTarget & { path: string; data: Uint8Array | string },
): Promise<{ size: number }> {
  const { sandbox } = await fencedMachine(ctx, caller, input);
  await viaProvider(() => sandbox.files.write(input.path, input.data));
  return { size: typeof input.data === "string" ? Buffer.byteLength(input.data) : input.data.byteLength };
}

export async function listAgentFiles(
  ctx: ServiceContext,
  caller: Caller,
  input: FencedTarget & { path: string },
): Promise<FileEntry[]> {
  const { sandbox } = await fencedMachine(ctx, caller, input);
  return viaProvider(() => sandbox.files.list(input.path));
}
