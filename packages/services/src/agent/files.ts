/**
 * Fenced workspace file verbs for the agent's file tools (TOOL-1). A tool call always names its
 * bot, so by the one path rule (resolveWorkspacePath) paths are relative to the bot's folder
 * (`bots/<bot-id>/` on a Team Computer, the workspace root on a Private one; CMP-1).
 */
import type { FileEntry } from "@rakazo/sandbox";
import { ensureBotFolder, pathForBot, resolveWorkspacePath } from "../computers/bot-folders.ts";
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
  return (await readAgentFileAt(ctx, caller, input)).bytes;
}

/** `readAgentFile` with the workspace path the bot's path resolved to. */
export async function readAgentFileAt(
  ctx: ServiceContext,
  caller: Caller,
  input: FencedTarget & { path: string; maxBytes?: number },
): Promise<{ path: string; bytes: Uint8Array }> {
  const { sandbox, computer } = await fencedMachine(ctx, caller, input);
  const path = resolveWorkspacePath(computer, input.botId, input.path);
  const bytes = await viaProvider(() =>
    sandbox.files.read(path, { maxBytes: input.maxBytes ?? MAX_AGENT_READ_BYTES }),
  );
  return { path, bytes };
}

export async function writeAgentFile(
  ctx: ServiceContext,
  caller: Caller,
  input: FencedTarget & { path: string; data: Uint8Array | string },
): Promise<{ size: number }> {
  const { sandbox, computer } = await fencedMachine(ctx, caller, input);
  const path = resolveWorkspacePath(computer, input.botId, input.path);
  await viaProvider(() => sandbox.files.write(path, input.data));
  return { size: typeof input.data === "string" ? Buffer.byteLength(input.data) : input.data.byteLength };
}

export async function listAgentFiles(
  ctx: ServiceContext,
  caller: Caller,
  input: FencedTarget & { path: string },
): Promise<FileEntry[]> {
  const { sandbox, computer } = await fencedMachine(ctx, caller, input);
  const path = resolveWorkspacePath(computer, input.botId, input.path);
  await ensureBotFolder(sandbox, computer, input.botId);
  const entries = await viaProvider(() => sandbox.files.list(path));
  // Entries name paths the way the bot names them: relative to its folder.
  return entries.map((entry) => ({ ...entry, path: pathForBot(computer, input.botId, entry.path) }));
}
