/**
 * The bridge's tools as a stdio MCP server: `node apps/bridge/src/stdio.ts`, started by a
 * harness as its child. It holds only its client's bridge token, as BRIDGE_TOKEN (an agent can
 * read its harness's environment), reaches the bridge over HTTP, and keeps the session's
 * capabilities in memory.
 * When stdin closes, the session's computers are released (destroyed unless kept).
 */
import { randomUUID } from "node:crypto";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { parseBridgeMcpEnv } from "@rakazo/config";
import { httpToolCaller } from "./http-caller.ts";
import { createMcpSession } from "./mcp.ts";

const env = parseBridgeMcpEnv(process.env);
const session = createMcpSession(httpToolCaller(env.BRIDGE_URL, env.BRIDGE_TOKEN), {
  conversationId: env.BRIDGE_CONVERSATION_ID ?? randomUUID(),
  teamRoot: env.BRIDGE_TEAM_ROOT,
});
const transport = new StdioServerTransport();
let closing = false;
const finish = async (): Promise<void> => {
  if (closing) return;
  closing = true;
  await session.close();
  process.exit(0);
};
transport.onclose = () => void finish();
process.stdin.on("end", () => void finish());
process.on("SIGTERM", () => void finish());
await session.server.connect(transport);
