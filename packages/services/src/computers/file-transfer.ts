/**
 * A person's file transfers (FIL-3): download from a running computer; upload and text writes
 * into the bot's folder under the caller's control lease, capped at the attachment size limit
 * before anything is stored. A stopped computer answers COMPUTER_NOT_READY (`details.state`);
 * browsing and previews still work there through the stored workspace (files.ts, FIL-1).
 */
import { posix } from "node:path";
import { MAX_ATTACHMENT_BYTES } from "@rakazo/protocol";
import type { Caller, ServiceContext } from "../context.ts";
import { AppError } from "../errors.ts";
import { liveControlLease } from "../runs/leases.ts";
import { viaProvider } from "../sandbox-errors.ts";
import { type ComputerRow, requireComputer, requireRunningMachine } from "./access.ts";
import { requireBotOnComputer, touchComputer } from "./activity.ts";
import { botFolder, resolveWorkspacePath, SHARED_FOLDER } from "./bot-folders.ts";
import { personPath } from "./files.ts";

export interface DownloadedFile {
  readonly path: string;
  readonly name: string;
  readonly size: number;
  readonly contentBase64: string;
}

export async function downloadComputerFile(
  ctx: ServiceContext,
  caller: Caller,
  input: { computerId: string; botId?: string | undefined; path: string },
): Promise<DownloadedFile> {
  const computer = await requireComputer(ctx, caller, input.computerId);
  const path = await personPath(ctx, computer, input);
  const sandbox = requireRunningMachine(ctx, computer);
  const bytes = await viaProvider(() => sandbox.files.read(path, { maxBytes: MAX_ATTACHMENT_BYTES }));
  return downloaded(path, bytes);
}

export function downloaded(path: string, bytes: Uint8Array): DownloadedFile {
  return {
    path,
    name: posix.basename(path),
    size: bytes.byteLength,
    contentBase64: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64"),
  };
}

/** How many bytes a base64 text decodes to, without decoding it. */
export function base64Bytes(text: string): number {
  const padding = text.endsWith("==") ? 2 : text.endsWith("=") ? 1 : 0;
  return Math.floor((text.length * 3) / 4) - padding;
}

export async function uploadComputerFile(
  ctx: ServiceContext,
  caller: Caller,
  input: { computerId: string; botId: string; path: string; contentBase64: string },
): Promise<{ path: string; size: number }> {
  // The cap is checked on the declared size before any decoding or I/O.
  refuseOverCap(base64Bytes(input.contentBase64));
  return storeForPerson(ctx, caller, input, () => Buffer.from(input.contentBase64, "base64"));
}

export async function writeComputerTextFile(
  ctx: ServiceContext,
  caller: Caller,
  input: { computerId: string; botId: string; path: string; text: string },
): Promise<{ path: string; size: number }> {
  refuseOverCap(Buffer.byteLength(input.text));
  return storeForPerson(ctx, caller, input, () => Buffer.from(input.text, "utf8"));
}

function refuseOverCap(size: number): void {
  if (size > MAX_ATTACHMENT_BYTES) {
    throw new AppError("FILE_TOO_LARGE", `files may hold at most ${MAX_ATTACHMENT_BYTES} bytes`, {
      size,
      maxBytes: MAX_ATTACHMENT_BYTES,
    });
  }
}

async function storeForPerson(
  ctx: ServiceContext,
  caller: Caller,
  input: { computerId: string; botId: string; path: string },
  bytes: () => Buffer,
): Promise<{ path: string; size: number }> {
  const computer = await requireComputer(ctx, caller, input.computerId);
  await requireBotOnComputer(ctx, computer, input.botId);
  const lease = await liveControlLease(ctx, { computerId: computer.id, botId: input.botId });
  if (!lease || lease.userId !== caller.userId) {
    throw new AppError("NOT_IN_CONTROL", "take control of this bot's computer to change its files");
  }
  const sandbox = requireRunningMachine(ctx, computer);
  // The one path rule, with the bot named: relative to its folder (resolveWorkspacePath).
  const path = resolveWorkspacePath(computer, input.botId, input.path);
  if (!writableForBot(computer, input.botId, path)) {
    throw new AppError("INVALID_PATH", "uploads land in the bot's folder or in shared/");
  }
  const data = bytes();
  // SandboxFiles.write replaces the file atomically (a temporary file renamed into place), so a
  // failed transfer leaves the previous file or none, never a partial one.
  await viaProvider(() => sandbox.files.write(path, data));
  await touchComputer(ctx, computer.id);
  return { path, size: data.byteLength };
}

/**
 * Where a person may store a file for a bot: inside the bot's folder, or in the Team Computer's
 * `shared/` folder beside the bots' folders (CMP-1); never the folder itself, another bot's
 * folder or the workspace's top level. On a Private Computer the whole workspace is its bot's.
 * The web app applies the same rule before sending (apps/web/ui/src/files.tsx).
 */
function writableForBot(computer: Pick<ComputerRow, "mode">, botId: string, path: string): boolean {
  const folder = botFolder(computer, botId);
  if (path === "") return false;
  if (folder === "") return true;
  return path.startsWith(`${folder}/`) || path.startsWith(`${SHARED_FOLDER}/`);
}
