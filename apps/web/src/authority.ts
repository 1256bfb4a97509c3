/**
 * The web service's side of the screen authority (SCR-5, SCR-6): asks the API, with the
 * shared service token, where a capability's gateway is and which ticket to present there.
 * The answer is validated before use; nothing from it is ever logged.
 */
export type GatewayTarget =
  | { readonly transport: "unix"; readonly socketPath: string }
  | { readonly transport: "http"; readonly url: string; readonly headers: Readonly<Record<string, string>> };

type RejectReason =
  | "invalid_path"
  | "authority_rejected"
  | "invalid_authority_response"
  | "authority_unavailable";

type Authorization =
  | {
      readonly ok: true;
      readonly target: GatewayTarget;
      readonly ticket: string;
      readonly policy: "view" | "control";
    }
  | {
      readonly ok: false;
      readonly reason: Exclude<RejectReason, "invalid_path">;
      /** The authority's own reason (expired, revoked, forged, …) when it gave one; no secrets. */
      readonly detail?: string;
      readonly status?: number;
    };

export interface ScreenAuthority {
  authorize(capability: string): Promise<Authorization>;
}

export interface AuthorityClientOptions {
  /** The API's base URL as the web service reaches it, e.g. http://127.0.0.1:8787. */
  readonly apiUrl: string;
  readonly serviceToken: string;
  readonly timeoutMs?: number;
}

const TICKET = /^rs1\.[A-Za-z0-9_-]{1,32}\.[A-Za-z0-9_-]{20,2000}$/;
const DETAIL = /^[a-z_]{1,40}$/;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The authority's answer, or undefined when it is not a usable target. */
function parseAuthorization(body: unknown): Extract<Authorization, { ok: true }> | undefined {
  const result = isRecord(body) ? body.result : undefined;
  if (!isRecord(result) || !isRecord(result.target)) return undefined;
  const { target, ticket, policy } = result;
  if (typeof ticket !== "string" || !TICKET.test(ticket)) return undefined;
  if (policy !== "view" && policy !== "control") return undefined;
  if (target.transport === "unix") {
    const socketPath = target.socketPath;
    if (typeof socketPath !== "string" || !socketPath.startsWith("/") || socketPath.length > 107)
      return undefined;
    return { ok: true, target: { transport: "unix", socketPath }, ticket, policy };
  }
  if (target.transport === "http") {
    let url: URL;
    try {
      url = new URL(String(target.url));
    } catch {
      return undefined;
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") return undefined;
    const headers: Record<string, string> = {};
    if (target.headers !== undefined) {
      if (!isRecord(target.headers)) return undefined;
      for (const [key, value] of Object.entries(target.headers)) {
        if (typeof value !== "string") return undefined;
        headers[key] = value;
      }
    }
    return {
      ok: true,
      target: { transport: "http", url: url.href.replace(/\/$/, ""), headers },
      ticket,
      policy,
    };
  }
  return undefined;
}

export function createAuthorityClient(options: AuthorityClientOptions): ScreenAuthority {
  const endpoint = `${options.apiUrl.replace(/\/$/, "")}/internal/screens/authorize`;
  return {
    async authorize(capability) {
      let response: Response;
      let body: unknown;
      try {
        response = await fetch(endpoint, {
          method: "POST",
          headers: { authorization: `Bearer ${options.serviceToken}`, "content-type": "application/json" },
          body: JSON.stringify({ capability }),
          signal: AbortSignal.timeout(options.timeoutMs ?? 5000),
        });
        body = await response.json().catch(() => undefined);
      } catch {
        return { ok: false, reason: "authority_unavailable" };
      }
      if (!response.ok) {
        const detail =
          isRecord(body) && isRecord(body.error) && isRecord(body.error.details)
            ? body.error.details.reason
            : undefined;
        return {
          ok: false,
          reason: "authority_rejected",
          status: response.status,
          ...(typeof detail === "string" && DETAIL.test(detail) ? { detail } : {}),
        };
      }
      return parseAuthorization(body) ?? { ok: false, reason: "invalid_authority_response" };
    },
  };
}
