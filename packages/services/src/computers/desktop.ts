/**
 * Desktop verbs: a bot's screen, observed and acted on (CMP-4: started on first use).
 * A caller that passes a fencing token must hold the bot's live execution lease; a caller
 * without one may drive the bot only while nobody holds that lease (CMP-3) and, while a person
 * holds the bot's control lease, only as that person with its token (TKO-1).
 */
import type { ActResult, DesktopAction } from "@rakazo/sandbox";
import type { Caller, ServiceContext } from "../context.ts";
import { AppError } from "../errors.ts";
import { assertFence, liveControlLease, liveExecutionLease } from "../runs/leases.ts";
import { viaProvider } from "../sandbox-errors.ts";
import { type ComputerRow, requireComputer } from "./access.ts";
import { requireBotOnComputer, touchComputer } from "./activity.ts";
import { machineFor } from "./first-use.ts";
import { forgetLiveReports } from "./query.ts";

export interface BotActionInput {
  readonly computerId: string;
  readonly botId: string;
  readonly fencingToken?: number;
  /** The caller's own control lease token (`computer/takeControl`), while they control the bot. */
  readonly controlToken?: number;
}

export interface ObserveResult {
  readonly pngBase64: string;
  readonly width: number;
  readonly height: number;
  readonly frameHash: string;
  readonly slot: { readonly index: number; readonly generation: number };
}

/** Checks ownership, bot, fence; returns the running machine's desktop. */
export async function prepareBotAction(ctx: ServiceContext, caller: Caller, input: BotActionInput) {
  const computer = await requireComputer(ctx, caller, input.computerId);
  await requireBotOnComputer(ctx, computer, input.botId);
  await checkDriver(ctx, caller, computer, input);
  const sandbox = await machineFor(ctx, computer);
  if (!sandbox.desktop) throw new AppError("UNSUPPORTED", `${ctx.provider.kind} computers have no desktop`);
  await touchComputer(ctx, computer.id);
  return { computer, sandbox, desktop: sandbox.desktop };
}

export async function checkDriver(
  ctx: ServiceContext,
  caller: Caller,
  computer: ComputerRow,
  input: BotActionInput,
): Promise<void> {
  const key = { computerId: computer.id, botId: input.botId };
  if (input.fencingToken !== undefined) {
    await assertFence(ctx, { ...key, fencingToken: input.fencingToken });
    return;
  }
  if (await liveExecutionLease(ctx, key)) {
    throw new AppError(
      "LEASE_HELD",
      "a run is driving this bot; pass its fencingToken or stop the bot first",
    );
  }
  // TKO-1: while a person controls the bot's screen only they drive it, with their control
  // lease's token; a tokenless caller (the API, an agent without a run) would fight them.
  const control = await liveControlLease(ctx, key);
  if (!control) return;
  if (input.controlToken === undefined) {
    throw new AppError(
      "HUMAN_IN_CONTROL",
      "a person controls this screen; wait until they release it or pass your controlToken",
    );
  }
  if (control.userId !== caller.userId || control.fencingToken !== input.controlToken) {
    throw new AppError("NOT_IN_CONTROL", "this control token is not the live control lease of this screen");
  }
}

export async function observeDesktop(
  ctx: ServiceContext,
  caller: Caller,
  input: BotActionInput,
): Promise<ObserveResult> {
  const { desktop } = await prepareBotAction(ctx, caller, input);
  // Observing may start the bot's desktop: the next computer/get shows it.
  const frame = await viaProvider(() => desktop.observe(input.botId)).finally(() =>
    forgetLiveReports(input.computerId),
  );
  return {
    pngBase64: Buffer.from(frame.png).toString("base64"),
    width: frame.width,
    height: frame.height,
    frameHash: frame.frameHash,
    slot: frame.slot,
  };
}

export async function actOnDesktop(
  ctx: ServiceContext,
  caller: Caller,
  input: BotActionInput & { actions: readonly DesktopAction[] },
): Promise<ActResult> {
  const { desktop } = await prepareBotAction(ctx, caller, input);
  return viaProvider(() => desktop.act(input.botId, input.actions)).finally(() =>
    forgetLiveReports(input.computerId),
  );
}
