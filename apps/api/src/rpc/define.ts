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
}

export function defineRpc<I extends z.ZodType, O>(definition: RpcDefinition<I, O>): RpcDefinition<I, O> {
  return definition;
}

export const ids = {
  computer: /^cmp_[a-z0-9]{20}$/,
  space: /^spc_[a-z0-9]{20}$/,
  bot: /^bot_[a-z0-9]{20}$/,
};
