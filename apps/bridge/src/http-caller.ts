/** A ToolCaller that reaches the bridge over HTTP with BRIDGE_TOKEN (the stdio MCP server's). */
import { BridgeError } from "./errors.ts";
import type { ToolCaller } from "./mcp.ts";

export function httpToolCaller(
  bridgeUrl: string,
  bridgeToken: string,
  send: (request: Request) => Promise<Response> = (request) => fetch(request),
): ToolCaller {
  const base = bridgeUrl.replace(/\/+$/, "");
  return async (name, body) => {
    const response = await send(
      new Request(`${base}/v1/${name}`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${bridgeToken}` },
        body: JSON.stringify(body),
      }),
    );
    const json = (await response.json().catch(() => null)) as {
      result?: unknown;
      error?: { code: string; message: string; details?: Record<string, unknown> };
    } | null;
    if (!response.ok || !json || !("result" in json)) {
      throw new BridgeError(
        json?.error?.code ?? "BAD_GATEWAY",
        json?.error?.message ?? `HTTP ${response.status}`,
        response.status,
        json?.error?.details,
      );
    }
    return json.result;
  };
}
