/**
 * The bridge suites' fixture: the real bridge (a child process) in front of the real API on the
 * fake provider, with the clients alpha and beta, started before a file's tests and closed after
 * them (every external computer destroyed first). What the suites ask of it — a client's token,
 * the API's live external computers, an MCP session, a hand-made POST /mcp — is here once.
 */
import { createExternalClient } from "@rakazo/client";
import { afterAll, beforeAll } from "vitest";
import { type ExternalStack, type ExternalStackOptions, startExternalStack } from "../support/external.ts";
import { openMcpSession } from "./mcp-session.ts";

export type BridgeClient = "alpha" | "beta";

/** MCP's streamable HTTP wants both; a session's later requests name it and the protocol version. */
const MCP_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };

/** Registers the file's beforeAll/afterAll; `label` names its MCP sessions' client info. */
export function useBridgeStack(label: string, bridgeEnv: ExternalStackOptions["bridgeEnv"] = {}) {
  let started: ExternalStack | undefined;

  beforeAll(async () => {
    started = await startExternalStack({ provider: "fake", clients: ["alpha", "beta"], bridgeEnv });
  }, 60_000);

  afterAll(async () => {
    if (!started) return;
    await started.destroyAll();
    await started.close();
  }, 60_000);

  const stack = (): ExternalStack => {
    if (!started) throw new Error("the bridge stack is used before its beforeAll ran");
    return started;
  };
  const token = (client: BridgeClient) => stack().clientTokens[client] as string;

  return {
    stack,
    token,
    /** The API's live external computers: id → key and state. */
    async liveComputers(): Promise<Map<string, { key: string; state: string }>> {
      const api = createExternalClient({ baseUrl: stack().apiUrl, token: stack().externalToken });
      const listed = await api.call("external/computer/list", {});
      return new Map(listed.map((c) => [c.computerId, { key: c.key, state: c.state }]));
    },
    /** An MCP session as `client`, for `conversation`. */
    mcpSession: (client: BridgeClient, conversation: string, headers?: Record<string, string>) =>
      openMcpSession(stack().bridgeUrl(), token(client), conversation, `${label}-${client}`, headers),
    /** One JSON-RPC message to POST /mcp by hand, outside any SDK session unless `sessionId` says. */
    postMcp(bearer: string, message: unknown, sessionId?: string): Promise<Response> {
      return fetch(`${stack().bridgeUrl()}/mcp`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${bearer}`,
          ...MCP_HEADERS,
          ...(sessionId ? { "mcp-session-id": sessionId, "mcp-protocol-version": "2025-06-18" } : {}),
        },
        body: JSON.stringify(message),
      });
    },
  };
}
