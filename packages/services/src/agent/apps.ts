/**
 * `open_path` and `launch_app` (TOOL-1): start a program on the bot's own display. The desktop
 * starts first if needed (CMP-4), so the program appears on the screen the bot observes.
 */

import { botFolder, ensureBotFolder } from "../computers/bot-folders.ts";
import type { Caller, ServiceContext } from "../context.ts";
import { AppError } from "../errors.ts";
import { viaProvider } from "../sandbox-errors.ts";
import { type FencedTarget, fencedMachine } from "./fenced.ts";

const APP_NAME = /^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$/;

async function startOnDisplay(
  ctx: ServiceContext,
  caller: Caller,
  input: FencedTarget,
  argv: readonly string[],
): Promise<{ display: number }> {
  const { sandbox, computer } = await fencedMachine(ctx, caller, input);
  const desktop = sandbox.desktop;
  if (!desktop) throw new AppError("UNSUPPORTED", "this computer has no desktop");
  let slot = (await viaProvider(() => desktop.list())).find((s) => s.botId === input.botId);
  if (!slot) {
    await viaProvider(() => desktop.observe(input.botId));
    slot = (await viaProvider(() => desktop.list())).find((s) => s.botId === input.botId);
  }
  if (!slot) throw new AppError("DESKTOP_UNAVAILABLE", "the bot's desktop did not start");
  await ensureBotFolder(sandbox, computer, input.botId);
  // setsid -f detaches the program, so the call returns once it has started.
  const result = await viaProvider(() =>
    sandbox.exec({
      argv: ["setsid", "-f", ...argv],
      // Programs start in the bot's folder (CMP-1), so relative paths mean what its files tools mean.
      cwd: botFolder(computer, input.botId),
      env: { DISPLAY: `:${slot.display}` },
      timeoutMs: 15_000,
    }),
  );
  if (result.exitCode !== 0) {
    throw new AppError(
      "INVALID_INPUT",
      `${argv[0]} failed (exit ${result.exitCode}): ${result.stderr.trim().slice(-300)}`,
    );
  }
  return { display: slot.display };
}

export function openPath(
  ctx: ServiceContext,
  caller: Caller,
  input: FencedTarget & { path: string },
): Promise<{ display: number }> {
  if (input.path.startsWith("-")) throw new AppError("INVALID_INPUT", "path must not start with '-'");
  return startOnDisplay(ctx, caller, input, ["xdg-open", input.path]);
}

export function launchApp(
  ctx: ServiceContext,
  caller: Caller,
  input: FencedTarget & { app: string; args?: readonly string[] },
): Promise<{ display: number }> {
  if (!APP_NAME.test(input.app))
    throw new AppError("INVALID_INPUT", "app must be a program name, e.g. gedit");
  return startOnDisplay(ctx, caller, input, [input.app, ...(input.args ?? [])]);
}
