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
  /**
   * Sends one RPC's POST and returns the answer's status and body, in place of `fetch`: for a
   * caller on Node that makes many small calls (the bridge's api-transport.ts) and has no use for
   * WHATWG Request and Response objects around each.
   */
  readonly post?: RpcPost;
}

/** One RPC's POST as plain values: the URL, the headers and the JSON body, and the answer back. */
export type RpcPost = (
  url: string,
  headers: Readonly<Record<string, string>>,
  body: string,
) => Promise<{ readonly status: number; readonly body: string }>;

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
  const post: RpcPost =
    options.post ??
    (async (url, headers, body) => {
      const response = await send(new Request(url, { method: "POST", headers, body }));
      // A body that cannot be read whole answers like one that is not JSON (INVALID_RESPONSE).
      return { status: response.status, body: await response.text().catch(() => "") };
    });
  const base = options.baseUrl.replace(/\/+$/, "");
  const headers: Record<string, string> = {
    "content-type": "application/json",
    ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
  };
  return {
    async call(name, input) {
      const answer = await post(`${base}/rpc/${name}`, headers, JSON.stringify(input));
      let body: unknown;
      try {
        body = JSON.parse(answer.body);
      } catch {
        throw new RakazoApiError(
          answer.status,
          "INVALID_RESPONSE",
          `HTTP ${answer.status} without a JSON body`,
        );
      }
      const ok = answer.status >= 200 && answer.status < 300;
      if (!ok) throw errorFrom(answer.status, body);
      if (!body || typeof body !== "object" || !("result" in body)) throw errorFrom(answer.status, body);
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
