/**
 * The external surface's tool verbs (EXT-2): exec, one text file read or written,
 * a screen observed, its browser driven. Each names an external computer (NOT_FOUND otherwise)
 * and, for screens, a screen identity registered by create-or-adopt. Without a run, a screen is
 * driven only while no run or person holds it (the same driver rule as `computer/act`).
 */
import type { PageAction, PageActResult, PageNavigation, PageSnapshot } from "@rakazo/sandbox";
import { defaultBrowserMode, pageBrowserOf } from "../agent/page.ts";
import { requireBotOnComputer, touchComputer } from "../computers/activity.ts";
import { resolveWorkspacePath } from "../computers/bot-folders.ts";
import { checkDriver, type ObserveResult, observeDesktop } from "../computers/desktop.ts";
import { type ExecComputerResult, execComputer } from "../computers/exec.ts";
import { machineFor } from "../computers/first-use.ts";
import type { ServiceContext } from "../context.ts";
import { AppError } from "../errors.ts";
import { viaProvider } from "../sandbox-errors.ts";
import { EXTERNAL_CALLER, screenBotId } from "./account.ts";
import { requireExternalComputer } from "./computers.ts";

/** The largest text file read or written in one call. */
export const EXTERNAL_FILE_MAX_BYTES = 1024 * 1024;

export async function externalExec(
  ctx: ServiceContext,
  input: {
    readonly computerId: string;
    readonly argv: readonly string[];
    readonly cwd?: string;
    readonly env?: Readonly<Record<string, string>>;
    readonly stdin?: string;
    readonly timeoutMs?: number;
  },
): Promise<ExecComputerResult> {
  await requireExternalComputer(ctx, input.computerId);
  return execComputer(ctx, EXTERNAL_CALLER, input);
}

async function externalMachine(ctx: ServiceContext, computerId: string) {
  const { row } = await requireExternalComputer(ctx, computerId);
  const sandbox = await machineFor(ctx, row);
  await touchComputer(ctx, row.id);
  return { row, sandbox };
}

export async function readExternalFile(
  ctx: ServiceContext,
  input: { readonly computerId: string; readonly path: string },
): Promise<{ path: string; content: string; bytes: number }> {
  const { row, sandbox } = await externalMachine(ctx, input.computerId);
  // The one path rule with no bot named: relative to the workspace root, as exec's default cwd.
  const path = resolveWorkspacePath(row, undefined, input.path);
  const bytes = await viaProvider(() => sandbox.files.read(path, { maxBytes: EXTERNAL_FILE_MAX_BYTES }));
  let content: string;
  try {
    content = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new AppError("INVALID_INPUT", "the file is not UTF-8 text");
  }
  return { path, content, bytes: bytes.byteLength };
}

export async function writeExternalFile(
  ctx: ServiceContext,
  input: { readonly computerId: string; readonly path: string; readonly content: string },
): Promise<{ path: string; bytes: number }> {
  const data = new TextEncoder().encode(input.content);
  if (data.byteLength > EXTERNAL_FILE_MAX_BYTES) {
    throw new AppError(
      "FILE_TOO_LARGE",
      `a file written in one call holds at most ${EXTERNAL_FILE_MAX_BYTES} bytes`,
    );
  }
  const { row, sandbox } = await externalMachine(ctx, input.computerId);
  const path = resolveWorkspacePath(row, undefined, input.path);
  await viaProvider(() => sandbox.files.write(path, data));
  return { path, bytes: data.byteLength };
}

interface ScreenTarget {
  readonly computerId: string;
  readonly screen: string;
}

export async function observeExternalScreen(
  ctx: ServiceContext,
  input: ScreenTarget,
): Promise<ObserveResult> {
  await requireExternalComputer(ctx, input.computerId);
  return observeDesktop(ctx, EXTERNAL_CALLER, {
    computerId: input.computerId,
    botId: screenBotId(input.screen),
  });
}

async function screenPage(ctx: ServiceContext, input: ScreenTarget) {
  const { row } = await requireExternalComputer(ctx, input.computerId);
  const botId = screenBotId(input.screen);
  await requireBotOnComputer(ctx, row, botId);
  await checkDriver(ctx, EXTERNAL_CALLER, row, { computerId: row.id, botId });
  const sandbox = await machineFor(ctx, row);
  await touchComputer(ctx, row.id);
  return { botId, page: pageBrowserOf(sandbox, defaultBrowserMode(ctx), ctx) };
}

export async function navigateExternalBrowser(
  ctx: ServiceContext,
  input: ScreenTarget & { readonly url: string },
): Promise<PageNavigation> {
  const { botId, page } = await screenPage(ctx, input);
  return viaProvider(() => page.navigate(botId, input.url));
}

export async function snapshotExternalBrowser(
  ctx: ServiceContext,
  input: ScreenTarget,
): Promise<PageSnapshot> {
  const { botId, page } = await screenPage(ctx, input);
  return viaProvider(() => page.snapshot(botId));
}

export async function actExternalBrowser(
  ctx: ServiceContext,
  input: ScreenTarget & { readonly actions: readonly PageAction[] },
): Promise<PageActResult> {
  const { botId, page } = await screenPage(ctx, input);
  return viaProvider(() => page.act(botId, input.actions));
}
