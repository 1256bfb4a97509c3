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
  E extends readonly string[] = readonly string[],
> {
  readonly name: N;
  /** One line: what the RPC does (the OpenAPI operation's summary). */
  readonly summary: string;
  /**
   * What a caller must know, preconditions first (a control lease, which token, what an empty
   * body means): the RPC's documentation, in the OpenAPI document and nowhere else.
   */
  readonly description: string;
  /**
   * The error codes this RPC's own work can answer, besides those every RPC can get (auth, bad
   * input, body limits: `apps/api/src/openapi.ts`). The API types them as its AppErrorCodes and
   * a test holds them to the codes its handler can reach (docs/decisions.md, "The OpenAPI
   * document").
   */
  readonly errors: E;
  /**
   * `token`: a bearer API token; `bootstrap`: first-run setup (optionally a bootstrap token);
   * `external`: the deployment's `EXTERNAL_COMPUTER_TOKEN`, served only when set; `invite`: no
   * bearer, the one-time invite code in the body is the credential (`invite/redeem`).
   */
  readonly auth: "token" | "bootstrap" | "external" | "invite";
  readonly input: I;
  /** What `result` holds on the wire (Dates are already ISO strings here). */
  readonly output: O;
}

export function defineContract<
  const N extends string,
  I extends z.ZodType,
  O extends z.ZodType,
  const E extends readonly string[],
>(contract: RpcContract<N, I, O, E>): RpcContract<N, I, O, E> {
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
  user: "usr",
  invite: "inv",
  approval: "apr",
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
export const userId = idOf("user");
export const inviteId = idOf("invite");
export const approvalId = idOf("approval");

/**
 * A timestamp: services may hand over a Date (JSON turns it into its ISO string) or the
 * string itself; the wire (and the JSON Schema, generated with `io: "output"`) says string.
 */
export const timestamp = z
  .union([z.date(), z.iso.datetime({ offset: true })])
  .transform((value) => (value instanceof Date ? value.toISOString() : value))
  .pipe(z.iso.datetime({ offset: true }));
