/**
 * The app's API access: the typed client (@rakazo/client) against the web service's `/api`,
 * which adds the session's token on the server. The browser never holds an API token.
 */
import { createClient, RakazoApiError } from "@rakazo/client";

export { RakazoApiError };

const APP_HEADER = "x-rakazo-app";

async function appFetch(request: Request): Promise<Response> {
  const headers = new Headers(request.headers);
  headers.set(APP_HEADER, "1");
  const response = await fetch(new Request(request, { headers, credentials: "same-origin" }));
  if (response.status === 401) window.dispatchEvent(new Event("rakazo:signed-out"));
  return response;
}

export const api = createClient({ baseUrl: `${location.origin}/api`, fetch: appFetch });

async function post<T>(path: string, body: unknown): Promise<T> {
  const response = await fetch(path, {
    method: "POST",
    headers: { "content-type": "application/json", [APP_HEADER]: "1" },
    credentials: "same-origin",
    body: JSON.stringify(body),
  });
  const json = (await response.json().catch(() => null)) as {
    result?: T;
    error?: { code: string; message: string };
  } | null;
  if (!response.ok || !json?.result)
    throw new RakazoApiError(response.status, json?.error?.code ?? "ERROR", json?.error?.message ?? "error");
  return json.result;
}

export const auth = {
  async session(): Promise<boolean> {
    const response = await fetch("/auth/session", { credentials: "same-origin" });
    const json = (await response.json()) as { result: { signedIn: boolean } };
    return json.result.signedIn;
  },
  /** Whether first-run setup is done (no sign-in needed to ask). */
  async setUp(): Promise<boolean> {
    const response = await fetch("/auth/setup", { credentials: "same-origin" });
    const json = (await response.json()) as { result?: { setUp: boolean } };
    if (!json.result) throw new RakazoApiError(response.status, "API_UNAVAILABLE", "the API did not answer");
    return json.result.setUp;
  },
  signIn: (token: string) => post<{ signedIn: true }>("/auth/signin", { token }),
  bootstrap: (input: { userName: string; spaceName: string; botName: string; bootstrapToken: string }) =>
    post<{ signedIn: true; token: string }>("/auth/bootstrap", input),
  signOut: () => post<{ signedIn: false; revoked: boolean }>("/auth/signout", {}),
};

/** The path of a web-service URL the API answered (screens, terminals live on this origin). */
export function sameOriginPath(url: string): string {
  const parsed = new URL(url, location.href);
  return `${parsed.pathname}${parsed.search}`;
}

export function errorMessage(error: unknown): string {
  if (error instanceof RakazoApiError) return `${error.code}: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}
