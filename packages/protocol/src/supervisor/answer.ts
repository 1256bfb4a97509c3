/** Every supervisor answer, and the typed call every host transport implements on top of it. */
import { z } from "zod";
import {
  SUPERVISOR_METHODS,
  type SupervisorMethod,
  type SupervisorParams,
  type SupervisorResult,
} from "./methods.ts";

/** Error codes are a subset of `@rakazo/sandbox`'s `SandboxErrorCode`, so clients map them 1:1. */
export type SupervisorErrorCode =
  | "MULTI_SCREEN_UNAVAILABLE"
  | "DESKTOP_UNAVAILABLE"
  | "INVALID_ACTION"
  | "PAGE_TIMEOUT"
  | "PROCESS_NOT_FOUND"
  | "PROCESS_LIMIT"
  | "SANDBOX_PROVIDER_ERROR";

export interface SupervisorErrorBody {
  readonly code: string;
  readonly message: string;
  /** e.g. `{ reason: "memory" | "pids" | "cpu" | "limit", active, limit }` for MULTI_SCREEN_UNAVAILABLE. */
  readonly details?: Record<string, unknown>;
}

export type SupervisorAnswer<T = unknown> =
  | { readonly ok: true; readonly result: T }
  | { readonly ok: false; readonly error: SupervisorErrorBody };

const answerSchema = z.union([
  z.object({ ok: z.literal(true), result: z.unknown() }),
  z.object({
    ok: z.literal(false),
    error: z.object({
      code: z.string(),
      message: z.string(),
      details: z.record(z.string(), z.unknown()).optional(),
    }),
  }),
]);

/** A typed supervisor call: params checked at compile time, the result validated on arrival. */
export interface SupervisorCaller {
  call<M extends SupervisorMethod>(method: M, params: SupervisorParams<M>): Promise<SupervisorResult<M>>;
}

/** Why an answer could not be used: not an answer, or a result of the wrong shape. */
export class SupervisorProtocolError extends Error {
  override readonly name = "SupervisorProtocolError";
}

/**
 * Checks a raw answer for `method`: the `ok:false` body as is, or the result parsed with the
 * method's result schema. Transports call this on whatever arrived (socket body, CLI stdout).
 */
export function parseSupervisorAnswer<M extends SupervisorMethod>(
  method: M,
  raw: unknown,
): SupervisorAnswer<SupervisorResult<M>> {
  const answer = answerSchema.safeParse(raw);
  if (!answer.success) throw new SupervisorProtocolError(`supervisor ${method}: not a supervisor answer`);
  if (!answer.data.ok) return answer.data;
  const result = SUPERVISOR_METHODS[method].result.safeParse(answer.data.result);
  if (!result.success) {
    throw new SupervisorProtocolError(
      `supervisor ${method}: malformed result (${z.prettifyError(result.error).slice(0, 300)})`,
    );
  }
  return { ok: true, result: result.data as SupervisorResult<M> };
}
