import { z } from "zod";

/**
 * One RPC's contract: `POST /rpc/<name>` with a JSON body matching `input`, answered with
 * `{ result }` matching `output`. The API binds a handler to it; clients derive their types
 * from it; the OpenAPI document and the generated suites are built from it.
 */
export interface RpcContract<
  N extends string = string,
  I extends z.ZodType = z.ZodType,
  O extends z.ZodType = z.ZodType,
> {
  readonly name: N;
  /**
   * `token`: a bearer API token; `bootstrap`: first-run setup (optionally a bootstrap token);
   * `external`: the deployment's `EXTERNAL_COMPUTER_TOKEN` (issue 19), served only when set.
   */
  readonly auth: "token" | "bootstrap" | "external";
  readonly input: I;
  /** What `result` holds on the wire (Dates are already ISO strings here). */
  readonly output: O;
}

export function defineContract<const N extends string, I extends z.ZodType, O extends z.ZodType>(
  contract: RpcContract<N, I, O>,
): RpcContract<N, I, O> {
  return contract;
}

export const ids = {
  computer: /^cmp_[a-z0-9]{20}$/,
  space: /^spc_[a-z0-9]{20}$/,
  bot: /^bot_[a-z0-9]{20}$/,
};

/**
 * A timestamp: services may hand over a Date (JSON turns it into its ISO string) or the
 * string itself; the wire (and the JSON Schema, generated with `io: "output"`) says string.
 */
export const timestamp = z
  .union([z.date(), z.iso.datetime({ offset: true })])
  .transform((value) => (value instanceof Date ? value.toISOString() : value))
  .pipe(z.iso.datetime({ offset: true }));
