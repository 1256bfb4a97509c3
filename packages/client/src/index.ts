/**
 * A typed client for the Rakazo RPC API: names, inputs and results come from
 * @rakazo/api-contract, so a call site stops compiling when an RPC's shape changes.
 *
 *   const rakazo = createClient({ baseUrl: "http://127.0.0.1:3000", token });
 *   const computer = await rakazo.call("computer/get", { computerId });
 */
import type { ExternalRpcName, RpcInput, RpcName, RpcOutput } from "@rakazo/api-contract";

export type { ExternalRpcName, RpcInput, RpcName, RpcOutput } from "@rakazo/api-contract";

/** A refusal from the API: `code` is the stable error code (README "Errors"). */
export class RakazoApiError extends Error {
  override readonly name = "RakazoApiError";
  readonly code: string;
  readonly status: number;
  readonly details: Record<string, unknown> | undefined;

  constructor(status: number, code: string, message: string, details?: Record<string, unknown>) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

export interface ClientOptions {
  /** Where the API listens, e.g. `http://127.0.0.1:3000` (no trailing `/rpc`). */
  readonly baseUrl: string;
  /** A bearer API token (`rkz_…`); omit for `setup/bootstrap` without a bootstrap token. */
  readonly token?: string | undefined;
  /** Defaults to the global fetch; tests pass an in-process one. */
  readonly fetch?: (request: Request) => Promise<Response>;
}

export interface RakazoClient {
  call<N extends RpcName>(name: N, input: RpcInput<N>): Promise<RpcOutput<N>>;
}

function errorFrom(status: number, body: unknown): RakazoApiError {
  const error = (body as { error?: { code?: unknown; message?: unknown; details?: unknown } } | null)?.error;
  if (error && typeof error.code === "string" && typeof error.message === "string") {
    const details =
      error.details && typeof error.details === "object"
        ? (error.details as Record<string, unknown>)
        : undefined;
    return new RakazoApiError(status, error.code, error.message, details);
  }
  return new RakazoApiError(status, "INVALID_RESPONSE", `unexpected HTTP ${status} answer from the API`);
}

export function createClient(options: ClientOptions): RakazoClient {
  const send = options.fetch ?? ((request: Request) => fetch(request));
  const base = options.baseUrl.replace(/\/+$/, "");
  return {
    async call(name, input) {
      const response = await send(
        new Request(`${base}/rpc/${name}`, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
          },
          body: JSON.stringify(input),
        }),
      );
      let body: unknown;
      try {
        body = await response.json();
      } catch {
        throw new RakazoApiError(
          response.status,
          "INVALID_RESPONSE",
          `HTTP ${response.status} without a JSON body`,
        );
      }
      if (!response.ok) throw errorFrom(response.status, body);
      if (!body || typeof body !== "object" || !("result" in body)) throw errorFrom(response.status, body);
      // The server checks results against the same contract (apps/api/src/app.ts); the client
      // trusts its types rather than re-validating, so a newer server's extra fields do not break it.
      return (body as { result: RpcOutput<typeof name> }).result;
    },
  };
}

/** The external computer surface's client: only `external/*` names type-check. */
export interface ExternalClient {
  call<N extends ExternalRpcName>(name: N, input: RpcInput<N>): Promise<RpcOutput<N>>;
}

/**
 *   const rakazo = createExternalClient({ baseUrl, token: process.env.EXTERNAL_COMPUTER_TOKEN });
 *   const { computer } = await rakazo.call("external/computer/create", { screen: "conversation-7" });
 */
export function createExternalClient(options: ClientOptions): ExternalClient {
  return createClient(options);
}
