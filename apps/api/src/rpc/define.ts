import type { Caller, ServiceContext } from "@rakazo/services";
import type { z } from "zod";

/**
 * One RPC: `POST /rpc/<name>` with a JSON body validated by `input`. Authenticated RPCs get
 * the caller; the handler only calls a domain verb.
 */
export interface RpcDefinition<I extends z.ZodType = z.ZodType, O = unknown> {
  readonly name: string;
  readonly input: I;
  readonly auth: "token" | "bootstrap";
  readonly handler: (ctx: ServiceContext, caller: Caller, input: z.infer<I>) => Promise<O>;
  /**
   * TOOL-4: an RPC that acts on a computer describes each call (succeeded or failed) for its
   * activity feed, like the agent's tools do (./record-activity.ts). Read-only RPCs have none.
   */
  readonly activity?: (input: z.infer<I>, outcome: RpcOutcome<O>) => RpcActivity;
}

export type RpcOutcome<O> =
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
  readonly details?: Record<string, unknown>;
}

export function defineRpc<I extends z.ZodType, O>(definition: RpcDefinition<I, O>): RpcDefinition<I, O> {
  return definition;
}

export const ids = {
  computer: /^cmp_[a-z0-9]{20}$/,
  space: /^spc_[a-z0-9]{20}$/,
  bot: /^bot_[a-z0-9]{20}$/,
};
