/**
 * FIL-1: browsing and text preview through the stored workspace, so they work on stopped
 * computers. Docker homes are read in place; object-stored homes from the cache, refreshed to
 * the row's revision first.
 */
import type { FileEntry } from "@rakazo/sandbox";
import type { ComputerRow } from "../computers/access.ts";
import { AppError, type AppErrorCode } from "../errors.ts";
import type { HomesContext } from "./context.ts";
import { type HomeErrorCode, isHomeStoreError } from "./deps.ts";
import { dataKeyForStore } from "./keys.ts";

export const STORED_FILE_PREVIEW_BYTES = 1024 * 1024;

const TO_APP: Partial<Record<HomeErrorCode, AppErrorCode>> = {
  INVALID_PATH: "INVALID_PATH",
  FILE_NOT_FOUND: "FILE_NOT_FOUND",
  FILE_TOO_LARGE: "FILE_TOO_LARGE",
  CHECKPOINT_CONFLICT: "CONFLICT",
};

/** Home-store errors as domain errors; the store's code stays in `details.homeCode`. */
export async function viaHomes<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (isHomeStoreError(error)) {
      throw new AppError(
        TO_APP[error.code] ?? "INTERNAL",
        error.message,
        { homeCode: error.code },
        { cause: error },
      );
    }
    throw error;
  }
}

async function home(ctx: HomesContext, computer: ComputerRow) {
  return {
    homeKey: computer.homeKey,
    revision: computer.homeRevision,
    dataKey: await dataKeyForStore(ctx, computer, { create: false }),
  };
}

export async function listStoredFiles(
  ctx: HomesContext,
  input: { computer: ComputerRow; path: string },
): Promise<{ path: string; entries: FileEntry[] }> {
  return viaHomes(async () => ({
    path: input.path,
    entries: await ctx.homes.listFiles({ ...(await home(ctx, input.computer)), path: input.path }),
  }));
}

export interface StoredFilePreview {
  readonly path: string;
  readonly size: number;
  /** Null when the file is not UTF-8 text (contains NUL bytes or invalid sequences). */
  readonly text: string | null;
}

export async function readStoredFile(
  ctx: HomesContext,
  input: { computer: ComputerRow; path: string; maxBytes?: number },
): Promise<StoredFilePreview> {
  return viaHomes(async () => {
    const bytes = await ctx.homes.readFile({
      ...(await home(ctx, input.computer)),
      path: input.path,
      maxBytes: input.maxBytes ?? STORED_FILE_PREVIEW_BYTES,
    });
    return toPreview(input.path, bytes);
  });
}

export function toPreview(path: string, bytes: Uint8Array): StoredFilePreview {
  let text: string | null = null;
  if (!bytes.includes(0)) {
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    } catch {
      text = null;
    }
  }
  return { path, size: bytes.length, text };
}
