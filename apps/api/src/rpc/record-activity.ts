/**
 * Runs an RPC and, when it acts on a computer, records the call as a `computer.command` event
 * (TOOL-4), exactly like the agent's tools: stored and streamed live, redacted by the recorder.
 * The tool is the RPC's name and `details.via` says "api", so a person's call and a bot's call
 * are told apart; `details.by` says whether a person in the web app made it ("person", a web
 * session's token) or a script or the CLI ("api", an API token). A call refused because the computer is not the caller's leaves no trace.
 */
import { type Caller, recordCommandActivity, requireComputer, type ServiceContext } from "@rakazo/services";
import type { RpcActivity, RpcDefinition } from "./define.ts";

export async function runRecorded(
  ctx: ServiceContext,
  caller: Caller,
  rpc: RpcDefinition,
  input: unknown,
): Promise<unknown> {
  const describe = rpc.activity;
  if (!describe) return rpc.handler(ctx, caller, input);
  let result: unknown;
  try {
    result = await rpc.handler(ctx, caller, input);
  } catch (error) {
    const activity = describe(input, { ok: false, error: error as Error });
    if (await callerSees(ctx, caller, activity.computerId)) {
      await record(
        ctx,
        caller,
        rpc.contract.name,
        { ...activity, ok: false },
        (error as Error).message ?? String(error),
      );
    }
    throw error;
  }
  await record(ctx, caller, rpc.contract.name, describe(input, { ok: true, result }));
  return result;
}

async function callerSees(ctx: ServiceContext, caller: Caller, computerId: string): Promise<boolean> {
  try {
    await requireComputer(ctx, caller, computerId);
    return true;
  } catch {
    return false;
  }
}

async function record(
  ctx: ServiceContext,
  caller: Caller,
  tool: string,
  activity: RpcActivity,
  error?: string,
): Promise<void> {
  await recordCommandActivity(ctx, {
    computerId: activity.computerId,
    botId: activity.botId ?? null,
    tool,
    line: activity.line,
    ok: activity.ok ?? error === undefined,
    ...(error !== undefined ? { error } : {}),
    ...(activity.command !== undefined ? { command: activity.command } : {}),
    ...(activity.exitCode !== undefined ? { exitCode: activity.exitCode } : {}),
    ...(activity.output !== undefined ? { output: activity.output } : {}),
    ...(activity.stderr !== undefined ? { stderr: activity.stderr } : {}),
    // `by`: a person in the web app (their web session) or a script/CLI (an API token).
    details: {
      ...activity.details,
      via: "api",
      by: caller.tokenKind === "web_session" ? "person" : "api",
      userId: caller.userId,
    },
  });
}
