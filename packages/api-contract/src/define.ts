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
   * `external`: the deployment's `EXTERNAL_COMPUTER_TOKEN`, served only when set.
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

/** The prefix of every id an RPC takes, as packages/db mints them: `<prefix>_` + 20 base-36 characters. */
const ID_PREFIXES = {
  computer: "cmp",
  space: "spc",
  bot: "bot",
  run: "run",
  operation: "op",
  event: "evt",
  attachment: "att",
  token: "tok",
} as const;

/** An id of one kind; a malformed one is refused with a message naming the kind and its prefix. */
function idOf(kind: keyof typeof ID_PREFIXES): z.ZodString {
  const prefix = ID_PREFIXES[kind];
  const article = /^[aeiou]/.test(kind) ? "an" : "a";
  return z
    .string()
    .regex(new RegExp(`^${prefix}_[a-z0-9]{20}$`), `expected ${article} ${kind} id (${prefix}_…)`);
}

export const computerId = idOf("computer");
export const spaceId = idOf("space");
export const botId = idOf("bot");
export const runId = idOf("run");
export const operationId = idOf("operation");
export const eventId = idOf("event");
export const attachmentId = idOf("attachment");
export const tokenId = idOf("token");

/**
 * A timestamp: services may hand over a Date (JSON turns it into its ISO string) or the
 * string itself; the wire (and the JSON Schema, generated with `io: "output"`) says string.
 */
export const timestamp = z
  .union([z.date(), z.iso.datetime({ offset: true })])
  .transform((value) => (value instanceof Date ? value.toISOString() : value))
  .pipe(z.iso.datetime({ offset: true }));
