import type { RpcContract } from "@rakazo/api-contract";
import type { Caller, ServiceContext } from "@rakazo/services";
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
}

export function defineRpc<C extends RpcContract>(
  contract: C,
  handler: (
    ctx: ServiceContext,
    caller: Caller,
    input: z.output<C["input"]>,
  ) => Promise<z.input<C["output"]>>,
): RpcDefinition<C> {
  return { contract, handler };
}
