import type { RpcContract } from "@rakazo/api-contract";
import type { AppErrorCode, Caller, ServiceContext } from "@rakazo/services";
import type { z } from "zod";

/**
 * One RPC as the API serves it: its contract (name, auth, input, output) from
 * @rakazo/api-contract and a handler that only calls a domain verb. The handler's result must
 * be what the output schema accepts, so a service and its contract cannot drift apart
 * unnoticed (compile time here, runtime validation in tests and development: see app.ts).
 */
export interface RpcDefinition<C extends RpcContract = RpcContract> {
  readonly contract: C;
  // Method syntax on purpose: it lets every RpcDefinition<C> sit in one list without a cast.
  handler(ctx: ServiceContext, caller: Caller, input: z.output<C["input"]>): Promise<z.input<C["output"]>>;
  /**
   * TOOL-4: an RPC that acts on a computer describes each call (succeeded or failed) for its
   * activity feed, like the agent's tools do (./record-activity.ts). Read-only RPCs have none.
   */
  activity?(input: z.output<C["input"]>, outcome: RpcOutcome<z.input<C["output"]>>): RpcActivity;
}

type RpcOutcome<O> =
  | { readonly ok: true; readonly result: O }
  | { readonly ok: false; readonly error: Error };

/** One call as the activity feed shows it; the recorder adds the RPC name, caller and redaction. */
export interface RpcActivity {
  readonly computerId: string;
  readonly botId?: string | null;
  readonly line: string;
  /** Defaults to whether the call succeeded; exec also fails on a non-zero exit. */
  readonly ok?: boolean;
  readonly command?: string;
  readonly exitCode?: number;
  readonly output?: string;
  /** The error stream, kept apart from `output`. */
  readonly stderr?: string;
  readonly details?: Record<string, unknown>;
}

type Handler<C extends RpcContract> = RpcDefinition<C>["handler"];
type Describe<C extends RpcContract> = NonNullable<RpcDefinition<C>["activity"]>;

/** A contract whose declared `errors` are all codes of the services' list (a typo does not compile). */
type ServedContract = RpcContract & { readonly errors: readonly AppErrorCode[] };

export function defineRpc<C extends ServedContract>(
  contract: C,
  handler: Handler<C>,
  options: { readonly activity?: Describe<C> } = {},
): RpcDefinition<C> {
  return options.activity ? { contract, handler, activity: options.activity } : { contract, handler };
}

/**
 * The handler of a verb that takes no caller: the external surface, whose caller is always the
 * deployment's service account (app.ts), so its verbs see only the context and the input.
 */
export function withoutCaller<I, O>(
  verb: (ctx: ServiceContext, input: I) => Promise<O>,
): (ctx: ServiceContext, caller: Caller, input: I) => Promise<O> {
  return (ctx, _caller, input) => verb(ctx, input);
}

/**
 * The activity of one foreground command (`computer/exec`, `external/computer/exec`): the shell
 * line, then its exit code, its output and whether it passed (exit 0, not timed out).
 */
export function execActivity(
  base: Omit<RpcActivity, "line" | "command"> & { readonly command: string },
  outcome: RpcOutcome<{ exitCode: number; stdout: string; stderr: string; timedOut: boolean }>,
): RpcActivity {
  if (!outcome.ok) return { ...base, line: `$ ${base.command}` };
  const { exitCode, stdout, stderr, timedOut } = outcome.result;
  return {
    ...base,
    line: `$ ${base.command} → exit ${exitCode}${timedOut ? " (timed out)" : ""}`,
    exitCode,
    output: stdout,
    ...(stderr !== "" ? { stderr } : {}),
    ok: exitCode === 0 && !timedOut,
  };
}
