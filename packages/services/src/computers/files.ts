/**
 * Browsing a computer's files (FIL-1): a running computer answers from its live workspace; a
 * stopped one (or one whose machine is gone) from the stored workspace, so browsing and text
 * preview never need a machine.
 */
import type { FileEntry } from "@rakazo/sandbox";
import type { Caller, ServiceContext } from "../context.ts";
import {
  listStoredFiles,
  readStoredFile,
  STORED_FILE_PREVIEW_BYTES,
  type StoredFilePreview,
  toPreview,
} from "../homes/files.ts";
import { viaProvider } from "../sandbox-errors.ts";
import { type ComputerRow, requireComputer } from "./access.ts";
import { requireBotOnComputer } from "./activity.ts";
import { resolveWorkspacePath } from "./bot-folders.ts";

function liveSandbox(ctx: ServiceContext, computer: ComputerRow) {
  const live =
    computer.state === "running" && computer.providerRef && computer.providerKind === ctx.provider.kind;
  return live ? ctx.provider.sandbox(computer.providerRef as string) : undefined;
}

/** A person's file path: the one path rule (`botId` names the working folder, if given). */
export async function personPath(
  ctx: ServiceContext,
  computer: ComputerRow,
  input: { botId?: string | undefined; path: string },
): Promise<string> {
  if (input.botId !== undefined) await requireBotOnComputer(ctx, computer, input.botId);
  return resolveWorkspacePath(computer, input.botId, input.path);
}

export async function listComputerFiles(
  ctx: ServiceContext,
  caller: Caller,
  input: { computerId: string; botId?: string | undefined; path: string },
): Promise<{ path: string; source: "live" | "stored"; entries: FileEntry[] }> {
  const computer = await requireComputer(ctx, caller, input.computerId);
  const path = await personPath(ctx, computer, input);
  const sandbox = liveSandbox(ctx, computer);
  if (sandbox) {
    return { path, source: "live", entries: await viaProvider(() => sandbox.files.list(path)) };
  }
  return { ...(await listStoredFiles(ctx, { computer, path })), source: "stored" };
}

export async function readComputerFile(
  ctx: ServiceContext,
  caller: Caller,
  input: { computerId: string; botId?: string | undefined; path: string },
): Promise<StoredFilePreview & { source: "live" | "stored" }> {
  const computer = await requireComputer(ctx, caller, input.computerId);
  const path = await personPath(ctx, computer, input);
  const sandbox = liveSandbox(ctx, computer);
  if (sandbox) {
    const bytes = await viaProvider(() => sandbox.files.read(path, { maxBytes: STORED_FILE_PREVIEW_BYTES }));
    return { ...toPreview(path, bytes), source: "live" };
  }
  return { ...(await readStoredFile(ctx, { computer, path })), source: "stored" };
}
