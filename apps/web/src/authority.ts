/**
 * The web service's side of the screen authority (SCR-5, SCR-6): asks the API, with the
 * shared service token, where a capability's gateway is and which ticket to present there.
 * The answer is validated before use; nothing from it is ever logged.
 */
import {
  SCREEN_AUTHORITY_PATH,
  type ScreenGatewayTarget,
  screenAuthorityAnswerSchema,
} from "@rakazo/protocol";

/** The protocol's one gateway target type (also `ScreenGatewayTarget` in @rakazo/sandbox). */
type GatewayTarget = ScreenGatewayTarget;

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
      readonly policy: "view" | "control" | "terminal";
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

const DETAIL = /^[a-z_]{1,40}$/;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The authority's answer (@rakazo/protocol's schema), or undefined when it is not a usable target. */
function parseAuthorization(body: unknown): Extract<Authorization, { ok: true }> | undefined {
  const parsed = screenAuthorityAnswerSchema.safeParse(isRecord(body) ? body.result : undefined);
  if (!parsed.success) return undefined;
  const { target, ticket, policy } = parsed.data;
  if (target.transport === "unix") {
    return { ok: true, target: { transport: "unix", socketPath: target.socketPath }, ticket, policy };
  }
  return {
    ok: true,
    target: {
      transport: "http",
      url: new URL(target.url).href.replace(/\/$/, ""),
      headers: target.headers ?? {},
    },
    ticket,
    policy,
  };
}

export function createAuthorityClient(options: AuthorityClientOptions): ScreenAuthority {
  const endpoint = `${options.apiUrl.replace(/\/$/, "")}${SCREEN_AUTHORITY_PATH}`;
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
