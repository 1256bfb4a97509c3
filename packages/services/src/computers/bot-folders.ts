/**
 * Where a bot works on a computer (CMP-1). On a Team Computer each bot's shell, files and
 * tools start in `bots/<bot-id>/`, with `shared/` beside the bots' folders for shared work; on
 * a Private Computer the whole workspace is its bot's home. These folders organise work and are
 * NOT security boundaries: every bot of a Team Computer runs as the same user and may read or
 * write any folder (`../../shared/`, `../<other-bot>/`).
 */
import { posix } from "node:path";
import { computers } from "@rakazo/db";
import type { Sandbox } from "@rakazo/sandbox";
import { eq } from "drizzle-orm";
import type { ServiceContext } from "../context.ts";
import { AppError } from "../errors.ts";
import { viaProvider } from "../sandbox-errors.ts";
import type { ComputerRow } from "./access.ts";

export const BOTS_FOLDER = "bots";
export const SHARED_FOLDER = "shared";

type Placement = Pick<ComputerRow, "mode">;

/** The bot's folder, workspace-relative: `bots/<bot-id>` on a Team Computer, the root otherwise. */
export function botFolder(computer: Placement, botId: string): string {
  return computer.mode === "team" ? `${BOTS_FOLDER}/${botId}` : "";
}

/**
 * The one path rule of every file surface (docs/agent-tools.md, "One path rule for every file
 * surface"): a path is relative to a working folder — the named bot's folder when the call names
 * a bot (`bots/<bot-id>/` on a Team Computer, the root on a Private one), the workspace root when
 * it names none — and resolves to the workspace-relative path every answer carries. `..` may
 * climb out of the bot's folder (to `shared/`) but never out of the workspace; absolute paths and
 * NUL bytes are refused. Resolution is lexical (nothing is looked up or followed here); the
 * providers' own rules on the resolved path (no symlink following, docs/security.md) still apply.
 */
export function resolveWorkspacePath(computer: Placement, botId: string | undefined, path: string): string {
  if (path.includes("\0")) throw new AppError("INVALID_PATH", "path contains a NUL byte");
  if (path.startsWith("/")) {
    throw new AppError(
      "INVALID_PATH",
      botId === undefined
        ? "path must be relative to the workspace"
        : "path must be relative to the bot's folder (use ../../shared/ for shared work)",
    );
  }
  const parts = botId === undefined ? [] : botFolder(computer, botId).split("/").filter(Boolean);
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (parts.length === 0) throw new AppError("INVALID_PATH", "path leaves the workspace");
      parts.pop();
    } else parts.push(part);
  }
  return parts.join("/");
}

/** Creates the bot's folder and `shared/` on a Team Computer, on demand (idempotent). */
export async function ensureBotFolder(sandbox: Sandbox, computer: Placement, botId: string): Promise<void> {
  const folder = botFolder(computer, botId);
  if (folder === "") return;
  const result = await viaProvider(() =>
    sandbox.exec({ argv: ["mkdir", "-p", folder, SHARED_FOLDER], timeoutMs: 30_000 }),
  );
  if (result.exitCode !== 0) {
    throw new AppError("PROVIDER_ERROR", `could not create ${folder}/: ${result.stderr.trim().slice(-300)}`);
  }
}

/**
 * A workspace-relative path as the bot names it, relative to its folder (e.g. a download in the
 * team's `downloads/` is `../../downloads/x` to a Team Computer's bot).
 */
export function pathForBot(computer: Placement, botId: string, workspacePath: string): string {
  return posix.relative(botFolder(computer, botId) || ".", workspacePath || ".") || ".";
}

/** `pathForBot` for a computer known by id (the page tools' downloads; BRW-1). */
export async function pathsForBot(
  ctx: Pick<ServiceContext, "db">,
  target: { computerId: string; botId: string },
  workspacePaths: readonly string[],
): Promise<string[]> {
  const [row] = await ctx.db
    .select({ mode: computers.mode })
    .from(computers)
    .where(eq(computers.id, target.computerId))
    .limit(1);
  return workspacePaths.map((path) => (row ? pathForBot(row, target.botId, path) : path));
}
