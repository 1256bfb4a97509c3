/** An MCP session on the bridge through the SDK's own streamable HTTP client (a client nobody here wrote). */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { expect } from "vitest";

type CallResult = { content: { type: string; text?: string }[]; isError?: boolean };

export async function openMcpSession(
  bridgeUrl: string,
  bearer: string,
  conversation: string,
  label: string,
  /** More headers on every request, e.g. a browser's `origin`. */
  headers: Record<string, string> = {},
) {
  const transport = new StreamableHTTPClientTransport(new URL(`${bridgeUrl}/mcp`), {
    requestInit: {
      headers: { authorization: `Bearer ${bearer}`, "x-rakazo-conversation": conversation, ...headers },
    },
  });
  const mcp = new Client({ name: label, version: "1.0.0" });
  await mcp.connect(transport);
  const raw = async (name: string, args: Record<string, unknown> = {}) =>
    (await mcp.callTool({ name, arguments: args })) as CallResult;
  return {
    sessionId: transport.sessionId as string,
    raw,
    /** The session's tools as the server lists them. */
    listTools: async () => (await mcp.listTools()).tools,
    /** A tool call that must succeed; its JSON text answer, parsed. */
    async call(name: string, args: Record<string, unknown> = {}) {
      const result = await raw(name, args);
      expect(result.isError, `${label} ${name}: ${JSON.stringify(result.content)}`).toBeFalsy();
      return JSON.parse(result.content[0]?.text ?? "null");
    },
    /** DELETE, as a harness that ends its session does. */
    async end() {
      await transport.terminateSession();
      await mcp.close();
    },
    /** Leaves without a DELETE, like MCP Inspector or a crashed harness. */
    async abandon() {
      await mcp.close();
    },
  };
}
