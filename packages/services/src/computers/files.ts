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

function liveSandbox(ctx: ServiceContext, computer: ComputerRow) {
  const live =
    computer.state === "running" && computer.providerRef && computer.providerKind === ctx.provider.kind;
  return live ? ctx.provider.sandbox(computer.providerRef as string) : undefined;
}

export async function listComputerFiles(
  ctx: ServiceContext,
  caller: Caller,
  input: { computerId: string; path: string },
): Promise<{ path: string; source: "live" | "stored"; entries: FileEntry[] }> {
  const computer = await requireComputer(ctx, caller, input.computerId);
  const sandbox = liveSandbox(ctx, computer);
  if (sandbox) {
    return {
      path: input.path,
      source: "live",
      entries: await viaProvider(() => sandbox.files.list(input.path)),
    };
  }
  return { ...(await listStoredFiles(ctx, { computer, path: input.path })), source: "stored" };
}

export async function readComputerFile(
  ctx: ServiceContext,
  caller: Caller,
  input: { computerId: string; path: string },
): Promise<StoredFilePreview & { source: "live" | "stored" }> {
  const computer = await requireComputer(ctx, caller, input.computerId);
  const sandbox = liveSandbox(ctx, computer);
  if (sandbox) {
    const bytes = await viaProvider(() =>
      sandbox.files.read(input.path, { maxBytes: STORED_FILE_PREVIEW_BYTES }),
    );
    return { ...toPreview(input.path, bytes), source: "live" };
  }
  return { ...(await readStoredFile(ctx, { computer, path: input.path })), source: "stored" };
}
